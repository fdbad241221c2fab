"""A whole text in one voice to int16 audio, as infer_v2's ``infer`` returns
it: the text front end's segments (text/), each spoken by ``Segment``, with
upstream's silence between two segments (``interval_silence``: 200 ms of
zeros at 22050 Hz, 4410 samples, after every segment but the last).

Chunks come per vocoder window, each with its segment's index and whether it
ends the segment, so a host can stream them and interleave other requests at
segment ends. The one set of random draws runs through all segments in
order, as upstream's torch generator does.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np

from hexvoice_indextts.gpt.generate import Sampling
from hexvoice_indextts.segment import Draws, Segment, VoiceRows
from hexvoice_indextts.text.segments import MAX_SEGMENT_PIECES, split_segments
from hexvoice_indextts.text.tokens import Tokenizer

if TYPE_CHECKING:
    from daemon.sdk.ar.loop import Checkpoint

log = logging.getLogger(__name__)

#: infer_v2.infer_generator: sampling_rate = 22050, interval_silence = 200 (ms)
SAMPLE_RATE: Final = 22050
SILENCE_MS: Final = 200


def silence_samples(rate: int = SAMPLE_RATE, ms: int = SILENCE_MS) -> int:
    """infer_v2.interval_silence's length: int(rate * ms / 1000.0)."""
    return int(rate * ms / 1000.0)


@dataclass(frozen=True)
class Piece:
    """int16 audio of one vocoder window (or a silence) of segment ``segment``."""

    pcm: np.ndarray
    segment: int
    end_of_segment: bool = False


class Utterance:
    def __init__(
        self,
        tokenizer: Tokenizer,
        segment: Segment,
        max_pieces: int = MAX_SEGMENT_PIECES,
        quick_pieces: int = 0,
    ) -> None:
        self.tokenizer, self.segment = tokenizer, segment
        self.max_pieces, self.quick_pieces = max_pieces, quick_pieces

    def segments(self, text: str) -> list[list[int]]:
        """The text ids of each segment; ValueError when there is nothing to say."""
        pieces = self.tokenizer.pieces(text)
        unknown = self.tokenizer.unknown(pieces)
        if unknown:
            log.warning("%d piece(s) the BPE does not know: %s", len(unknown), unknown)
        cut = split_segments(pieces, self.max_pieces, self.quick_pieces)
        if not cut:
            raise ValueError(f"nothing to say in {text!r} once normalised")
        return [self.tokenizer.ids(s) for s in cut]

    def speak(
        self,
        segments: list[list[int]],
        voice: VoiceRows,
        draws: Draws,
        cancel: Checkpoint | None = None,
        sampling: Sampling | None = None,
    ) -> Iterator[Piece]:
        gap = np.zeros(silence_samples(), np.int16)
        for index, ids in enumerate(segments):
            last = index == len(segments) - 1
            window = None
            for pcm in self.segment.speak(ids, voice, draws, cancel, sampling):
                if window is not None:
                    yield Piece(window, index)
                window = pcm
            if self.segment.capped:
                log.warning("segment %d stopped at the %d codes the graphs hold",
                            index, len(self.segment.codes))  # fmt: skip
            if last:
                if window is not None:
                    yield Piece(window, index, end_of_segment=True)
                return
            if window is not None:
                yield Piece(window, index)
            yield Piece(gap, index, end_of_segment=True)
