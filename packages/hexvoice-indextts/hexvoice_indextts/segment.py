"""One text segment in a voice to int16 audio, on the graphs, as infer_v2's
``infer_generator`` runs a segment: the GPT's codes by beam sampling
(gpt/generate.py), the latent pass through gpt_layer, ``S_infer`` and the
target condition, the flow matching (s2mel/mel.py), BigVGAN's windows
(vocoder/windows.py), each window's int16 audio yielded as it is decoded.
``cancel`` is checked between graph calls.

The random numbers come from ``Draws``: the beam search's Exp(1) draws, then
the flow matching's starting noise, in that order (upstream's order on
torch's generator). ``numpy_draws`` is the daemon's; the parity tests feed
torch's own stream.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from hexvoice_indextts.gpt.generate import (
    GptRun,
    Sampling,
    beam_search,
    code_length,
    generate_codes,
)
from hexvoice_indextts.gpt.prompt import GptTables
from hexvoice_indextts.s2mel.mel import MelGraphs
from hexvoice_indextts.vocoder.pcm import to_int16
from hexvoice_indextts.vocoder.windows import Vocoder
from hexvoice_indextts.voice.frames import bucket_for
from hexvoice_indextts.voice.semantic_codes import Codebook

if TYPE_CHECKING:
    from daemon.sdk.ar.loop import Checkpoint
    from daemon.sdk.ar.stack import KvStack
    from daemon.sdk.graphs import Runner


class Draws(Protocol):
    def exponential(self, n: int) -> np.ndarray: ...  # float32 Exp(1)

    def normal(self, shape: tuple[int, ...]) -> np.ndarray: ...  # float32 N(0, 1)


@dataclass(frozen=True)
class NumpyDraws:
    rng: np.random.Generator

    def exponential(self, n: int) -> np.ndarray:
        return self.rng.standard_exponential(n, dtype=np.float32)

    def normal(self, shape: tuple[int, ...]) -> np.ndarray:
        return self.rng.standard_normal(shape, dtype=np.float32)


@dataclass(frozen=True)
class VoiceRows:
    """What a segment reads of its voice and emotion (voice/speaker.py,
    voice/emotion.py): the GPT's speaker latents [32, d] and emotion vector
    [d], CAM++'s style [192], the prompt condition [P, channels] and mel
    [80, P]."""

    latents: np.ndarray
    emotion: np.ndarray
    style: np.ndarray
    prompt_condition: np.ndarray
    ref_mel: np.ndarray


@dataclass(frozen=True)
class SegmentGraphs:
    gpt: KvStack
    latent: Mapping[int, Runner]  # the latent pass (with gpt_layer) by rows
    tables: GptTables
    codebook: Codebook
    mel: MelGraphs
    vocoder: Vocoder


class Segment:
    def __init__(self, graphs: SegmentGraphs, sampling: Sampling | None = None) -> None:
        self.g, self.sampling = graphs, sampling or Sampling()
        #: the last segment's codes (its stop token cut off), for tests and stats
        self.codes: list[int] = []

    def speak(
        self,
        text: Sequence[int],
        voice: VoiceRows,
        draws: Draws,
        cancel: Checkpoint | None = None,
    ) -> Iterator[np.ndarray]:
        """int16 audio per vocoder window; nothing when the GPT stops at once."""
        g = self.g
        cond = g.tables.conditioning(voice.latents, voice.emotion)
        search = beam_search(g.tables, self.sampling, draws.exponential)
        run = GptRun(g.gpt, g.tables)
        codes = generate_codes(run, g.tables.prompt(cond, text), search, cancel)
        self.codes = codes = codes[: code_length(codes, g.tables.stop_mel)]
        if not codes:
            return
        if cancel is not None:
            cancel.check()
        s_infer = g.codebook.embed(np.asarray(codes)) + self._latent(cond, text, codes)
        condition = np.concatenate([voice.prompt_condition, g.mel.condition(s_infer)])
        noise = draws.normal((voice.ref_mel.shape[0], len(condition)))
        mel = g.mel.mel(condition, voice.ref_mel, voice.style, noise, cancel)
        for audio in g.vocoder.stream(mel, cancel):
            yield to_int16(audio)

    def _latent(
        self, cond: np.ndarray, text: Sequence[int], codes: list[int]
    ) -> np.ndarray:
        rows, keep = self.g.tables.latent(cond, text, codes)
        bucket = bucket_for(len(rows), self.g.latent, "segment: latent rows")
        emb = np.zeros((1, bucket, rows.shape[1]), np.float32)
        emb[0, : len(rows)] = rows
        return self.g.latent[bucket].run({"emb": emb})[0][0, keep]
