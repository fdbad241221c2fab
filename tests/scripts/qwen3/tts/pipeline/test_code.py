"""Each build_tts_qwen3 step is keyed by its own sources: every source named
exists, and the slow steps (export, compile) do not depend on the gates, the
windows measurement or the engine."""

from __future__ import annotations

from scripts.qwen3.tts.pipeline import code


def test_every_named_source_exists_and_hashes():
    for rel in code.ALL:
        assert (code.ROOT / rel).exists(), rel
    assert set(code.hashes()) == {"windows", "export", "tables", "quant", "gates",
                                  "compile", "bundle"}  # fmt: skip
    assert len(set(code.hashes().values())) == len(code.ROOTS)


def test_export_and_compile_do_not_depend_on_the_gates_or_the_engine():
    for step in ("export", "compile"):
        for rel in code.ROOTS[step]:
            assert "gates" not in rel and "windows" not in rel, (step, rel)
            assert not rel.startswith("daemon/"), (step, rel)
    assert "scripts/qwen3/tts/graphs/gates.py" in code.ROOTS["gates"]
    assert "daemon/engines/qwen3/tts/stream.py" in code.ROOTS["windows"]
    assert set(code.ALL) >= {r for roots in code.ROOTS.values() for r in roots}
