"""scripts/bench/qwen3/asr/engine.py --quick prints its tables (the numbers are
not checked: a benchmark, not a timed test)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scripts.bench.qwen3.asr import engine as asr
from tests.scripts.bench.qwen3.tables import assert_tables, quick_run


def test_quick_prints_every_table(
    qnn_cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("onnxruntime_qnn")  # the stand-in bundle is compiled
    out = quick_run(asr.main, ["--no-compile"], qnn_cache, tmp_path, capsys)
    titles = (
        "resample + log-mel, 10 s of 44100 Hz x 2",
        "host per decode step, cpu backend",
        "bundle bytes per graph",
        "bytes streamed per decode step (ESTIMATE",
        "bandwidth floor at 64 GB/s",
    )
    # every graph of the bundle and the CPU table, then their total
    members = ("encoder", "prefill_256", "decode_384", "cpu/embed_tokens.npy")
    assert_tables(out, titles, members, columns=2)
    step = re.search(r"step, graphExecute excluded\s+([\d.]+)\s+([\d.]+)", out)
    assert step and float(step[1]) > 0
