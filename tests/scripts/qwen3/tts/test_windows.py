"""Codec windows (scripts/qwen3/tts/windows.py): the engine's schedule as
measured, the streaming decode through upstream's codec, the log-mel, the
choice of left context and the command line's window syntax."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from scripts.qwen3.tts import windows as w
from scripts.qwen3.tts.build import main as build_tts
from tests.qwen3_fixtures import require_qwen_tts

SPF = 1920


def test_window_syntax():
    assert w.parse_windows("16,80") == (w.Window(16), w.Window(80))
    assert w.parse_windows("8:4, 16:6") == (w.Window(8, 4), w.Window(16, 6))
    for bad in ("x", "8:8", "0", "8:-1", "8:"):
        if bad == "8:":  # an empty context is "measure it"
            assert w.parse_windows(bad) == (w.Window(8),)
            continue
        with pytest.raises(ValueError, match="expected"):
            w.parse_windows(bad)


def test_the_cli_refuses_a_bad_window(tmp_path: Path, capsys):
    with pytest.raises(SystemExit) as done:
        build_tts([str(tmp_path), "--target", "simulator", "--out", str(tmp_path / "o"),
                   "--codec-windows", "16:16"])  # fmt: skip
    assert done.value.code == 2
    assert "window '16:16': expected frames >= 1 and 0 <= context < frames" in (
        capsys.readouterr().err
    )


def test_the_schedule_is_the_engines_ramp():
    """First window: first_frames, no context, in the smallest graph holding
    them; then windows[0], then windows[1] repeated; contexts clipped at 0."""
    calls = w.schedule(30, [(8, 4), (16, 6)], 4)
    assert calls == [(8, 0, 0, 4), (8, 4, 4, 8), (16, 8, 6, 18), (16, 18, 6, 28),
                     (16, 28, 6, 30)]  # fmt: skip
    for n in range(1, 60):
        calls = w.schedule(n, [(8, 4), (16, 6)], 4)
        assert calls[0][1] == 0 and calls[-1][3] == n
        for (graph, start, ctx, end), nxt in zip(calls, [*calls[1:], None]):
            assert 0 <= ctx <= start and end - start + ctx <= graph
            assert nxt is None or nxt[1] == end
    # upstream's chunking: 300 new frames per 325-frame call, 25 of context
    assert w.schedule(700, [(325, 25)], 300) == [
        (325, 0, 0, 300), (325, 300, 25, 600), (325, 600, 25, 700)]  # fmt: skip


def test_choose_takes_the_smallest_passing_context_or_says_why():
    rows = [
        {"frames": 16, "context": 0, "snr_db": 12.0, "log_mel_l1": 0.2},
        {"frames": 16, "context": 8, "snr_db": 30.0, "log_mel_l1": 0.04},
        {"frames": 16, "context": 12, "snr_db": 40.0, "log_mel_l1": 0.01},
        {"frames": 16, "context": 4, "snr_db": 15.0, "log_mel_l1": 0.03},  # SNR
    ]
    assert w.choose(rows, 16) == 8
    why = r"codec window 16: no left context up to 12 frames reaches log-mel L1"
    with pytest.raises(ValueError, match=why + r" <= 0.05 and SNR >= 20"):
        w.choose(rows[:1] + rows[3:], 16)
    assert w.candidates(16) == [0, 2, 4, 8, 12]  # 4 of 16 frames stay new


@pytest.fixture(scope="module")
def codec(tiny_tts_custom: Path) -> Iterator[Any]:
    require_qwen_tts()
    from scripts.qwen3.tts.oracle_audio import load_codec
    from scripts.qwen3.tts.upstream import torch_threads

    with torch_threads(1):  # tiny ops: one thread (as the build runs them)
        yield load_codec(tiny_tts_custom / "speech_tokenizer")


def test_the_log_mel_is_upstreams(codec: Any):
    import torch

    from scripts.qwen3.tts.upstream import import_qwen_tts

    wav = w.torch_decoder(codec)(w.test_codes(128, 6))
    want = import_qwen_tts().modeling.mel_spectrogram(
        torch.from_numpy(wav)[None], **w.MEL)[0].T.numpy()  # fmt: skip
    got = w.log_mel(wav)
    assert got.shape == want.shape == (6 * SPF // 256, 128)
    np.testing.assert_allclose(got, want, atol=1e-4)
    assert w.log_mel_l1(wav, wav) == 0.0
    with pytest.raises(ValueError, match="length mismatch"):
        w.log_mel_l1(wav, wav[:-1])


def test_a_window_with_all_its_history_is_upstreams_decode(codec: Any):
    """The codec is causal: context reaching back to frame 0 reproduces
    upstream's decode exactly; a short context does not (what is measured)."""
    from scripts.common.parity import snr_db

    codes = w.test_codes(128, 24)
    want = w.upstream_decode(codec, codes)
    dec = w.torch_decoder(codec)
    full = w.stream_decode(dec, codes, [(32, 24)], 4, SPF)
    assert full.shape == want.shape and snr_db(want, full) >= 90
    short = w.stream_decode(dec, codes, [(8, 2)], 4, SPF)
    assert short.shape == want.shape and snr_db(want, short) < 40


def test_measure_stops_at_the_first_passing_context(codec: Any, monkeypatch):
    monkeypatch.setattr(w, "MAX_LOG_MEL_L1", 10.0)
    monkeypatch.setattr(w, "MIN_SNR_DB", -100.0)
    lines: list[str] = []
    rows = w.measure(codec, [8], SPF, 128, lines.append)
    assert [(r["frames"], r["context"], r["codes"]) for r in rows] == [(8, 0, 24)]
    assert lines == [f"codec window 8 context 0: SNR {rows[0]['snr_db']:.1f} dB, "
                     f"log-mel L1 {rows[0]['log_mel_l1']:.4f}"]  # fmt: skip
    assert w.choose(rows, 8) == 0


def test_a_window_without_a_context_stops_the_build_before_the_export(
    tiny_tts_custom: Path, tmp_path: Path, capsys
):
    """The tiny random codec needs far more context than 8 frames allow: the
    build measures, refuses naming the window and the best row, exits 1, and
    never exported (the windows step runs first)."""
    require_qwen_tts()
    out = tmp_path / "b"
    code = build_tts([str(tiny_tts_custom), "--target", "simulator", "--out", str(out),
                      "--codec-windows", "8", "--first-frames", "4"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1
    assert ("error: codec window 8: no left context up to 4 frames reaches log-mel "
            "L1 <= 0.05 and SNR >= 20.0 dB (best: {'frames': 8") in err  # fmt: skip
    assert "use a larger window or give FRAMES:CONTEXT" in err
    assert "[1/" in err and "export ..." not in err
    assert not (tmp_path / "b.work" / "onnx").exists()
