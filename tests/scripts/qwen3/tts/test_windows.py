"""Codec windows (scripts/qwen3/tts/windows.py): the engine's schedule as
measured, the streaming decode through upstream's codec, the log-mel and the
command line's window syntax (pipeline/options.py; the contexts:
test_codec_plan.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from scripts.qwen3.tts import windows as w
from scripts.qwen3.tts.build import main as build_tts
from scripts.qwen3.tts.pipeline.options import Window, parse_windows
from tests.qwen3_fixtures import require_qwen_tts

SPF = 1920


def test_window_syntax():
    assert parse_windows("16,80") == (Window(16), Window(80))
    assert parse_windows("8:4, 16:6") == (Window(8, 4), Window(16, 6))
    for bad in ("x", "8:8", "0", "8:-1", "8:"):
        if bad == "8:":  # an empty context is "measure it"
            assert parse_windows(bad) == (Window(8),)
            continue
        with pytest.raises(ValueError, match="expected"):
            parse_windows(bad)


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
    # windows stop at upstream's chunk ends and reach back no further than
    # upstream's call for the chunk (frame 275 for chunk 300..600)
    calls = w.schedule(420, [(40, 30), (100, 75), (200, 150)], 8)
    assert calls[:4] == [(40, 0, 0, 8), (40, 8, 8, 40), (100, 40, 40, 100),
                         (200, 100, 100, 200)]  # fmt: skip
    assert (200, 250, 150, 300) in calls and (200, 300, 25, 420) in calls


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
