"""One ``qwen3-asr`` session: audio streams in, segments are cut and decoded.

``feed`` normalises the samples (audio.py), adds them to the open segment and
encodes each of its windows as soon as the window's frames settle; when the
segment would outgrow what the prompt bucket holds, it is cut at a pause
(daemon/sdk/audio/silence.py) and decoded, the rest opening the next one.
``finish`` decodes the last segment.  Each segment is its own utterance, as
upstream treats the chunks of long audio (own peak, mel floor, prompt,
decode), and a split-off segment shorter than 0.5 s is zero-padded as
upstream pads them.  A decode yields partials (the text after ``<asr_text>``
so far, growing token by token) and one final (upstream's parse); each names
the segment's language as upstream does ("English"; None while unknown).

``feed`` and ``finish`` return generators: the work runs as the host iterates,
one item per decoded token.  Work left by a generator nobody iterated is done
by the next one, in order.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

import numpy as np

from daemon.engines.qwen3.asr.audio import SAMPLE_RATE
from daemon.engines.qwen3.asr.encoder import StreamingAudio
from daemon.engines.qwen3.asr.model import Model
from daemon.engines.qwen3.asr.options import Request
from daemon.engines.qwen3.asr.params import ENGINE_ID
from daemon.engines.qwen3.asr.text import (
    ASR_TEXT_TAG,
    TextStream,
    meta_language,
    parse,
    partial_text,
)
from daemon.sdk.asr import SessionFinished, Transcript, channels_of, downmix
from daemon.sdk.audio.resample import Resampler
from daemon.sdk.audio.silence import choose_cut
from daemon.sdk.cancel import CancelToken

#: upstream MIN_ASR_INPUT_SECONDS: split chunks shorter than this are zero-padded
MIN_SEGMENT_S: Final = 0.5
#: a long block of input is added in pieces of 1/4 of the longest segment
PIECES_PER_SEGMENT: Final = 4


@dataclass
class _Segment:
    audio: StreamingAudio
    start: int  # first sample, in the 16 kHz stream
    end: int = 0  # past its last sample (set when it closes)


class Qwen3AsrSession:
    """An open utterance stream (``daemon.sdk.asr.AsrSession``)."""

    def __init__(
        self, model: Model, request: Request, cancel: CancelToken | None
    ) -> None:
        self.model, self.request, self.cancel = model, request, cancel
        limit = model.max_samples(request.context, request.language)
        if request.max_segment_s is not None:
            asked = round(request.max_segment_s * SAMPLE_RATE)
            if asked > limit:
                raise ValueError(
                    f"{ENGINE_ID}: max_segment_s: expected at most "
                    f"{limit / SAMPLE_RATE:g} (what the prompt bucket holds), "
                    f"found {request.max_segment_s!r}"
                )
            limit = asked
        #: the longest segment, in 16 kHz samples
        self.max_samples = limit
        self._resampler: Resampler | None = None
        self._channels = 0
        self._open = _Segment(model.audio(), 0)
        self._closed: deque[_Segment] = deque()
        self._splits = 0
        self._finishing = False
        self._done = False

    # --- the protocol ---------------------------------------------------------
    def feed(self, pcm: np.ndarray, sample_rate: int) -> Iterator[Transcript]:
        self._check_open()
        channels = channels_of(pcm)
        if self._resampler is None:
            self._resampler = Resampler(sample_rate, SAMPLE_RATE)
            self._channels = channels
        elif (sample_rate, channels) != (self._resampler.rate, self._channels):
            raise ValueError(
                f"{ENGINE_ID}: the stream changed from {self._resampler.rate} Hz, "
                f"{self._channels} channel(s) to {sample_rate} Hz, {channels} "
                "within one session"
            )
        self._take(self._resampler.push(downmix(pcm)))
        return self._work()

    def finish(self) -> Iterator[Transcript]:
        self._check_open()
        self._finishing = True
        if self._resampler is not None:
            self._take(self._resampler.finish())
        self._close_open()
        return self._work(last=True)

    def close(self) -> None:
        self._done = True
        self._closed.clear()

    # --- segments -------------------------------------------------------------
    def _check_open(self) -> None:
        if self._finishing or self._done:
            raise SessionFinished(f"{ENGINE_ID}: the session is finished")
        if self.cancel is not None:
            self.cancel.check()

    def _take(self, x: np.ndarray) -> None:
        # in pieces: the mel of samples past a cut is computed again for the
        # next segment, so a long block pushed whole would cost that many times
        step = max(1, self.max_samples // PIECES_PER_SEGMENT)
        for i in range(0, len(x), step):
            self._take_piece(x[i : i + step])

    def _take_piece(self, x: np.ndarray) -> None:
        seg = self._open
        seg.audio.push(x)
        while seg.audio.mel.samples > self.max_samples:
            cut = choose_cut(seg.audio.mel.audio, SAMPLE_RATE, self.max_samples)
            rest = seg.audio.mel.tail(cut)
            seg.audio.truncate(cut)
            seg.end = seg.start + cut
            self._closed.append(seg)
            self._splits += 1
            seg = self._open = _Segment(self.model.audio(), seg.end)
            seg.audio.push(rest)

    def _close_open(self) -> None:
        seg = self._open
        seg.end = seg.start + seg.audio.mel.samples
        short = round(MIN_SEGMENT_S * SAMPLE_RATE) - seg.audio.mel.samples
        if self._splits and short > 0:
            seg.audio.push(np.zeros(short, np.float32))
        self._closed.append(seg)

    def _work(self, last: bool = False) -> Iterator[Transcript]:
        while self._closed:
            if self._done:
                return
            yield from self._decode(self._closed.popleft())
        if not last and not self._done:
            for _ in self._open.audio.encode_ready(self.cancel):
                pass
        if last:
            self._done = True

    def _decode(self, seg: _Segment) -> Iterator[Transcript]:
        start_s, end_s = seg.start / SAMPLE_RATE, seg.end / SAMPLE_RATE
        for _ in seg.audio.finish(self.cancel):
            pass
        req = self.request
        if seg.audio.frames == 0:  # under one hop of audio: nothing to hear
            yield Transcript("", True, start_s, end_s, req.language)
            return
        inputs = self.model.prepare(seg.audio, req.context, req.language)
        stream = TextStream(self.model.tokenizer)
        shown, language = "", req.language
        for token in self.model.tokens(inputs, req, self.cancel):
            if not stream.push(token):
                continue
            text = partial_text(stream.text, forced=req.language is not None)
            if len(text) > len(shown):
                if not shown and language is None:  # the meta part is complete
                    language = meta_language(stream.text.partition(ASR_TEXT_TAG)[0])
                shown = text
                yield Transcript(text, False, start_s, end_s, language or None)
        stream.flush()
        parsed = parse(stream.text, req.language)
        language = parsed.language or None
        yield Transcript(parsed.text, True, start_s, end_s, language)
