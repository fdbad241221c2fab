"""Frames from a prompt: talker code0, predictor codes 1..15, talker again.

Upstream's loop (docs/qwen3.md, TTS generation loop): the talker's prefill logits give
code0 of frame 0; feeding code0 runs the code predictor from the talker's last ``h``
(codes 1..15), then the talker steps on C(code0) + sum cp_table[i-1](code_i)
+ the prompt's text row for that step, giving the logits of the next code0.
So a frame is complete one step after its code0 is chosen, and the last code0
(EOS, or the ``max_new_tokens``-th) never gets a frame.

:meth:`Generator.feed` is that one step; ``loop.free_steps`` drives it for the
engine and ``loop.teacher_forced`` for the parity tests
(:meth:`Generator.teacher_forced`), so a test measures the code that runs.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence

import numpy as np

from daemon.engines.qwen3.tts.frames.predictor import ChooseCode, Predictor
from daemon.engines.qwen3.tts.frames.sampling import CodeChooser, TalkerChooser
from daemon.engines.qwen3.tts.frames.talker import Talker
from daemon.engines.qwen3.tts.options import Request
from daemon.engines.qwen3.tts.params import TtsParams
from daemon.engines.qwen3.tts.text.prompt import Prompt
from daemon.sdk.ar import loop
from daemon.sdk.ar.draws import request_rng
from daemon.sdk.ar.stats import DecodeStats
from daemon.sdk.cancel import CancelToken


class Generator:
    """Frames of one bundle's talker and predictor; one request at a time."""

    def __init__(self, p: TtsParams, talker: Talker, predictor: Predictor) -> None:
        self.p, self.talker, self.predictor = p, talker, predictor
        self.eos = p.tokens.codec_eos

    @property
    def stats(self) -> DecodeStats:
        """Its frames' account: the talker's (a step is a frame: one talker
        step and the predictor's)."""
        return self.talker.stats

    def limit(self, prompt: Prompt, request: Request) -> int:
        """Code0s at most: the request's, clamped so that every fed frame has a
        position in the largest KV bucket (prompt + frames)."""
        room = self.talker.max_positions - prompt.length + 1
        return max(0, min(request.max_new_tokens, room))

    def frames(
        self, prompt: Prompt, request: Request, cancel: CancelToken | None = None
    ) -> Iterator[np.ndarray]:
        """int64 [groups] codes per frame, each as soon as it is complete."""
        limit = self.limit(prompt, request)
        if limit == 0:
            return
        rng = request_rng(request.seed)
        choose = TalkerChooser(request.sampling, self.p.talker.vocab, self.eos, rng)
        code = CodeChooser(request.sampling, self.p.predictor.vocab, rng)
        if cancel is not None:
            cancel.check()
        logits, feed, done = self.start(prompt, code, cancel)
        # the feed checks ``cancel`` before each of its graph calls itself
        for _ in loop.free_steps(logits, choose, feed, limit):
            while done:
                yield done.pop(0)
        while done:
            yield done.pop(0)

    def start(
        self, prompt: Prompt, code: ChooseCode, cancel: CancelToken | None = None
    ) -> tuple[np.ndarray, loop.Feed, list[np.ndarray]]:
        """Prefill ``prompt``: the first code0's logits, the step on a code0
        (``loop.Feed``), and the list each fed frame is appended to."""
        logits, h = self.talker.start(prompt.embeds)
        done: list[np.ndarray] = []
        state = {"h": h, "step": 0}
        stats, time_ = self.stats, self.talker.time
        row = np.empty(self.p.talker.hidden, np.float32)

        def feed(code0: int) -> np.ndarray:
            t1 = time.perf_counter()
            graph0 = time_.talker + time_.predictor
            codes, codec_row = self.predictor.frame(state["h"], code0, code, cancel)
            done.append(np.array([code0, *codes], np.int64))
            np.add(codec_row, prompt.text_row(state["step"]), out=row)
            if cancel is not None:
                cancel.check()
            out, state["h"] = self.talker.step(row)
            state["step"] += 1
            # a frame's time: from its code0 on (the talker's choice is not in it)
            graph = time_.talker + time_.predictor - graph0
            stats.step(time.perf_counter() - t1, graph)
            return out

        return logits, feed, done

    def teacher_forced(
        self, prompt: Prompt, codes: Sequence[Sequence[int]] | np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Forced onto ``codes`` [n, groups]: talker logits [n + 1, V] (the
        prefill's, then one per fed frame) and predictor logits [n, groups - 1,
        Vc] (head k's, fed the forced codes), whatever the model would choose."""
        forced = np.asarray(codes, np.int64)
        g = self.p.predictor.groups
        if forced.ndim != 2 or forced.shape[1] != g:
            raise ValueError(f"codes must be [frames, {g}], found {list(forced.shape)}")
        n = len(forced)
        if prompt.length + n > self.talker.max_positions:
            raise ValueError(
                f"{n} frames after a {prompt.length}-row prompt exceed the largest "
                f"KV bucket {self.talker.max_positions}"
            )
        heads = np.zeros((n, g - 1, self.p.predictor.vocab), np.float32)
        frame = {"i": 0}

        def code(logits: np.ndarray, head: int) -> int:
            i = frame["i"]
            heads[i, head] = logits
            if (
                head == g - 2
            ):  # the frame's last head: the next call is the next frame's
                frame["i"] += 1
            return int(forced[i, head + 1])

        logits, feed, _ = self.start(prompt, code)
        talker = loop.teacher_forced(logits, feed, forced[:, 0])
        return talker, heads
