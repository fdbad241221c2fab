"""scripts/bench/qwen3/asr/engine.py --quick prints its tables (the numbers are
not checked: a benchmark, not a timed test)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scripts.bench.qwen3.asr import engine as asr


def test_quick_prints_every_table(
    qnn_cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("onnxruntime_qnn")  # the stand-in bundle is compiled
    assert asr.main(["--quick", "--no-compile", "--qnn-cache", str(qnn_cache),
                     "--work", str(tmp_path)]) == 0  # fmt: skip
    out = capsys.readouterr().out
    for title in (
        "resample + log-mel, 10 s of 44100 Hz x 2",
        "host per decode step, cpu backend",
        "bundle bytes per graph",
        "bytes streamed per decode step (ESTIMATE",
        "bandwidth floor at 64 GB/s",
    ):
        assert title in out
    step = re.search(r"step, graphExecute excluded\s+([\d.]+)\s+([\d.]+)", out)
    assert step and float(step[1]) > 0
    # every graph of the bundle and the CPU table, then their total
    for member in ("encoder", "prefill_256", "decode_384", "cpu/embed_tokens.npy"):
        assert re.search(rf"^{re.escape(member)}\s+[\d,]+\s+[\d,]+", out, re.M)
    assert re.search(r"^total\s+[\d,]+\s+[\d,]+$", out, re.M)
