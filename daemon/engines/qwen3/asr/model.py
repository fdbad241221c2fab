"""One loaded ``qwen3-asr`` model: an utterance's audio rows to its prompt, and
the decode from there.

The session (session.py) streams through these calls; the parity tests drive
the same ones on whole 16 kHz clips (:meth:`Model.inputs`,
:meth:`Model.greedy`, :meth:`Model.teacher_forced`), so they measure the code
the service runs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from daemon.engines.qwen3.asr.decoder import Decoder
from daemon.engines.qwen3.asr.encoder import (
    StreamingAudio,
    WindowEncoder,
    frames_for_tokens,
)
from daemon.engines.qwen3.asr.options import Request
from daemon.engines.qwen3.asr.params import AsrParams
from daemon.engines.qwen3.asr.prompt import Prompt, PromptBuilder
from daemon.sdk.ar import loop
from daemon.sdk.cancel import CancelToken

if TYPE_CHECKING:
    from tokenizers import Tokenizer


@dataclass(frozen=True)
class Inputs:
    """What the decoder starts from for one utterance."""

    prompt: Prompt  # ids [S], audio positions [N], rendered text
    audio: np.ndarray  # float32 [N, H] encoder rows
    x: np.ndarray  # float32 [S, H] prompt embeddings, audio rows scattered in

    @property
    def ids(self) -> np.ndarray:
        return self.prompt.ids


class Model:
    """The CPU tables and graph drivers of one bundle."""

    def __init__(
        self,
        p: AsrParams,
        tokenizer: Tokenizer,
        builder: PromptBuilder,
        encoder: WindowEncoder,
        decoder: Decoder,
    ) -> None:
        self.p, self.tokenizer, self.builder = p, tokenizer, builder
        self.encoder, self.decoder = encoder, decoder

    def audio(self) -> StreamingAudio:
        """A new utterance to push 16 kHz samples into."""
        return StreamingAudio(self.p, self.encoder)

    def max_samples(self, context: str, language: str | None) -> int:
        """The longest utterance (16 kHz samples) whose prompt fits the largest
        prefill bucket next to these text tokens; ValueError if not 1 chunk."""
        m = self.p.mel
        room = self.decoder.max_prompt - self.builder.text_tokens(context, language)
        frames = frames_for_tokens(max(room, 0), m)
        if frames < m.chunk_frames:
            raise ValueError(
                f"qwen3-asr: the prompt leaves room for {max(room, 0)} audio tokens "
                f"in the largest prefill bucket ({self.decoder.max_prompt}); "
                f"shorten it"
            )
        return frames * m.hop_length

    def prepare(
        self, audio: StreamingAudio, context: str, language: str | None
    ) -> Inputs:
        """The prompt of a finished utterance (``audio.finish`` ran)."""
        rows = audio.rows
        prompt = self.builder.build(context, language, len(rows))
        return Inputs(prompt, rows, self.builder.embeddings(prompt, rows))

    def limit(self, inputs: Inputs, request: Request) -> int:
        """New tokens at most: the request's, clamped to the largest KV bucket."""
        return min(request.max_new_tokens, self.decoder.max_positions - len(inputs.x))

    def tokens(
        self, inputs: Inputs, request: Request, cancel: CancelToken | None = None
    ) -> Iterator[int]:
        """The generated tokens (EOS excluded), one per decode step."""
        limit = self.limit(inputs, request)
        if cancel is not None:
            cancel.check()
        logits, feed = self.decoder.start(inputs.x, limit)
        choose = request.chooser(self.p.vocab, self.p.tokens.eos, inputs.ids)
        yield from loop.free_steps(logits, choose, feed, limit, cancel)

    # --- whole clips (parity tests, tools) -----------------------------------
    def inputs(
        self, pcm16k: np.ndarray, context: str = "", language: str | None = None
    ) -> Inputs:
        """The decoder inputs of a whole 16 kHz mono clip as one utterance
        (within :meth:`max_samples`), divided by its peak when that exceeds 1
        as upstream does (the mel front end applies it, as in a session)."""
        audio = self.audio()
        audio.push(np.asarray(pcm16k, np.float32))
        for _ in audio.finish():
            pass
        return self.prepare(audio, context, language)

    def greedy(self, inputs: Inputs, max_new_tokens: int | None = None) -> list[int]:
        """Greedy token ids (EOS excluded), as the engine decodes by default."""
        request = Request(
            context="",
            language=None,
            max_new_tokens=max_new_tokens or self.p.max_new_tokens,
            max_segment_s=None,
            temperature=0.0,
            top_k=None,
            top_p=1.0,
            repetition_penalty=1.0,
            seed=None,
        )
        return list(self.tokens(inputs, request))

    def teacher_forced(self, inputs: Inputs, tokens: Sequence[int]) -> np.ndarray:
        """Logits [1 + len(tokens), V]: the prefill's, then one step per token."""
        logits, feed = self.decoder.start(inputs.x, len(tokens))
        return loop.teacher_forced(logits, feed, tokens)
