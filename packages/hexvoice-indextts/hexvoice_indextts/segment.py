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
from dataclasses import dataclass, replace
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
from hexvoice_indextts.s2mel.mel import MelGraphs, target_frames
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
        #: whether the last segment's code limit was cut to the graphs' room
        self.capped = False

    def capacity(self, prompt_rows: int, text: int, prompt_frames: int) -> int:
        """The most codes the graphs hold after a prompt of ``prompt_rows``
        (``text`` of them the segment's ids): the largest K/V cache, latent
        pass, length regulator and DiT bucket (mel frames: the voice's
        ``prompt_frames`` and 1.72 per code)."""
        g = self.g
        cond = prompt_rows - text - 3  # the conditioning rows (GptTables.prompt)
        by_frames = [
            n for n in range(max(g.mel.dit) + 1)
            if target_frames(n) <= max(g.mel.length_regulator)
            and prompt_frames + target_frames(n) <= max(g.mel.dit)
        ]  # fmt: skip
        return max(0, min(
            g.gpt.max_positions - prompt_rows - 1,  # the last step's position
            max(g.latent) - cond - (text + 2) - 2,
            by_frames[-1] if by_frames else 0,
        ))  # fmt: skip

    def speak(
        self,
        text: Sequence[int],
        voice: VoiceRows,
        draws: Draws,
        cancel: Checkpoint | None = None,
        sampling: Sampling | None = None,
    ) -> Iterator[np.ndarray]:
        """int16 audio per vocoder window; nothing when the GPT stops at once.
        ``sampling`` (default: the segment's) is capped at what the graphs
        hold; ``capped`` then says whether this segment stopped there."""
        g = self.g
        sampling = sampling or self.sampling
        cond = g.tables.conditioning(voice.latents, voice.emotion)
        prompt = g.tables.prompt(cond, text)
        room = self.capacity(
            len(prompt), len(prompt) - len(cond) - 3, voice.ref_mel.shape[1]
        )
        if room < 1:
            raise ValueError(
                f"a segment of {len(text)} text pieces leaves no room for a code "
                "in the GPT's graphs"
            )
        self.capped = room < sampling.max_mel_tokens
        if self.capped:
            sampling = replace(sampling, max_mel_tokens=room)
        search = beam_search(g.tables, sampling, draws.exponential)
        run = GptRun(g.gpt, g.tables)
        codes = generate_codes(run, prompt, search, cancel)
        # stopped by the graphs' room, not by the stop token or the request
        self.capped = self.capped and g.tables.stop_mel not in codes
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
