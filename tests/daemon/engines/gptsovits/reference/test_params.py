"""ReferenceParams.max_seconds: the longest clip all four windows hold."""

from __future__ import annotations

import pytest

from daemon.engines.gptsovits.reference import spectrogram
from daemon.engines.gptsovits.reference.params import (
    HUBERT_RATE,
    MAX_REF_SECONDS,
    PROMPT_ZEROS,
    SPEC_RATE,
    ReferenceParams,
)
from daemon.sdk.audio import fbank


def _params(seconds: float) -> ReferenceParams:
    return ReferenceParams(
        hubert_samples=round(seconds * HUBERT_RATE) + PROMPT_ZEROS,
        spec_frames=spectrogram.frames_of(round(seconds * SPEC_RATE)),
        fbank_frames=fbank.frames_of(round(seconds * HUBERT_RATE)),
        sv_dim=1,
    )


@pytest.mark.parametrize("seconds", [3.0, 4.0, 6.5])
def test_windows_sized_for_a_length_hold_exactly_that_length(seconds: float) -> None:
    assert _params(seconds).max_seconds == pytest.approx(seconds)


def test_upstreams_ten_seconds_caps_larger_windows() -> None:
    assert _params(MAX_REF_SECONDS).max_seconds == MAX_REF_SECONDS
    assert _params(12.0).max_seconds == MAX_REF_SECONDS


def test_the_smallest_window_decides() -> None:
    p = _params(6.0)
    short_fbank = ReferenceParams(
        p.hubert_samples, p.spec_frames, fbank.frames_of(4 * HUBERT_RATE), 1
    )
    assert short_fbank.max_seconds == pytest.approx(4.0, abs=0.01)
    # one frame fewer than a clip needs: that clip no longer fits
    n = round(short_fbank.max_seconds * HUBERT_RATE)
    assert fbank.frames_of(n) <= short_fbank.fbank_frames < fbank.frames_of(n + 160)
