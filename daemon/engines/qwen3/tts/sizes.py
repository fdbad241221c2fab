"""The sizes of a ``qwen3-tts`` bundle's parts, as its ``params`` hold them.

The code predictor's decoder stack, the text side, the codec windows and the
Base speaker encoder; params.py's :class:`~daemon.engines.qwen3.tts.params.TtsParams`
holds one of each (the graphs they size: params.py's docstring).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import msgspec

from daemon.config.reader import invalid
from daemon.engines.qwen3.common.shapes import (
    Count,
    DecoderShape,
    Index,
    Positive,
    Sizes,
)


@dataclass(frozen=True)
class PredictorShape(DecoderShape):
    #: codebooks per frame: code0 from the talker, groups - 1 from the predictor
    groups: Count = 16

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.groups < 2:
            raise invalid("groups", "at least 2 code groups", self.groups)


@dataclass(frozen=True)
class TextShape:
    hidden: Count
    #: rows of one ``text_proj`` call
    rows: Count
    vocab: Count


@dataclass(frozen=True)
class CodecWindow:
    """One ``codec_<frames>`` graph: ``frames`` codes per call, of which up to
    ``context`` are left context (decoded again, their samples dropped; never
    before upstream's own call for the chunk starts) and the rest new frames
    (codec/stream.py); the first window of an utterance has no context."""

    frames: Count
    context: Index

    def __post_init__(self) -> None:
        if self.context >= self.frames:
            raise invalid("context", f"fewer than frames ({self.frames})", self.context)


@dataclass(frozen=True)
class CodecParams:
    sample_rate: Count
    samples_per_frame: Count
    #: upstream ``chunked_decode`` (chunk_size, left_context_size)
    chunk_frames: Count
    left_context: Index
    windows: Annotated[tuple[CodecWindow, ...], msgspec.Meta(min_length=1)]
    #: frames before the first audio leaves
    first_frames: Count
    #: the build's measured SNR of the streaming schedule against upstream's
    #: decode of the same codes (scripts/qwen3/tts/codec_plan.py; 999: equal);
    #: None in bundles built before it was measured
    stream_snr_db: float | None = None

    def __post_init__(self) -> None:
        if self.first_frames > max(w.frames for w in self.windows):
            raise invalid("first_frames", "at most the largest window's frames",
                          self.first_frames)  # fmt: skip


@dataclass(frozen=True)
class XVectorParams:
    """upstream ``mel_spectrogram`` + the ``speaker_<F>`` frame buckets."""

    sample_rate: Count
    n_fft: Count
    hop: Count
    win: Count
    pad: Index
    n_mels: Count
    fmin: Annotated[float, msgspec.Meta(ge=0)]
    fmax: Positive
    frame_buckets: Sizes
    dim: Count
    #: P: the speaker graphs' reflect input holds F + 2P frame indices (the
    #: encoder's widest conv padding); absent in bundles whose graphs took a
    #: clip cut to a bucket's exact length
    reflect_pad: Count | None = None

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "frame_buckets", tuple(sorted(set(self.frame_buckets)))
        )
        if self.reflect_pad is None:
            raise invalid(
                "reflect_pad", "the padding of speaker graphs that take any clip "
                "length (this bundle's graphs predate them: rebuild it with "
                "scripts/build-qwen3-tts)", "none", raw=True,
            )  # fmt: skip
        if self.frame_buckets[0] <= self.reflect_pad:
            raise invalid("frame_buckets", f"buckets above reflect_pad "
                          f"{self.reflect_pad}", list(self.frame_buckets))  # fmt: skip
        if self.fmax <= self.fmin or 2 * self.fmax > self.sample_rate:
            raise invalid("fmax", f"in ({self.fmin}, sample_rate/2]", self.fmax)
