"""scripts/bench/qwen3/tts/engine.py --quick prints its tables through the real
engine on the stand-in bundle (the numbers are not checked: a benchmark, not a
timed test)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scripts.bench.qwen3.tts import engine as tts_qwen3
from tests.scripts.bench.qwen3.tables import assert_tables, quick_run


def test_quick_prints_every_table(
    qnn_cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("onnxruntime_qnn")  # the stand-in bundle is compiled
    flags = ["--no-compile", "--no-check"]
    out = quick_run(tts_qwen3.main, flags, qnn_cache, tmp_path, capsys)
    titles = (
        "host per frame, cpu backend",
        "the frame's host pieces alone (greedy",
        "the frame's host pieces alone (sampled",
        "time to first audio vs whole utterance, CPU backend",
        "bundle bytes per graph",
        "bytes streamed per frame (80 ms of audio; ESTIMATE",
        "bandwidth floor at 64 GB/s, fp16",
        "bandwidth floor at 64 GB/s, cp w8a16",
    )
    members = ("talker_decode_1024", "cp_step", "codec_325", "cpu/cp_embedding.npy")
    assert_tables(out, titles, members, columns=3)
    frame = re.search(r"frame, graphExecute excluded\s+([\d.]+)", out)
    assert frame and float(frame[1]) > 0
    stand_in = r"stand-in \(full I/O, no compute\), \d+ frames\s+([\d.]+)\s+([\d.]+)"
    first = re.search(stand_in, out)
    assert first and 0 < float(first[1]) < float(first[2])  # audio before the end
