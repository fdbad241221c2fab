"""Each build step is keyed by its own sources: every source named exists, and
the slow steps do not depend on the gates or the engine."""

from __future__ import annotations

from scripts.qwen3.asr.pipeline import code


def test_every_named_source_exists_and_hashes():
    for rel in code.ALL:
        assert (code.ROOT / rel).exists(), rel
    assert set(code.hashes()) == {"export", "tables", "gates", "compile", "bundle"}
    assert len(set(code.hashes().values())) == len(code.ROOTS)


def test_export_and_compile_do_not_depend_on_the_gates_or_the_engine():
    for step in ("export", "compile"):
        for rel in code.ROOTS[step]:
            assert "gates" not in rel and not rel.startswith("daemon/"), (step, rel)
    assert "scripts/qwen3/asr/gates.py" in code.ROOTS["gates"]
    assert set(code.ALL) >= {r for roots in code.ROOTS.values() for r in roots}
