"""A voice from a clip, what registration computes once and keeps (no audio):
the speaker conditioning (speaker.py), the GPT's 32 speaker latents and
upstream's two emotion vectors of the clip, on the graphs of the row bucket
that holds them.

Upstream reads the speaker clip twice: at 22050 Hz then torchaudio's 16 kHz
for the speaker conditioning (``spk_cond_emb``), and at 16 kHz straight from
librosa (soxr HQ) as the emotion reference when no other is given.  Its
``merge_emovec`` takes the emotion vector of both (``base`` and ``emotion``)
and returns ``base + alpha * (emotion - base)``, so both are kept.
``emotion_of`` reads a second clip (an emotion reference) the same way.

``emotion_for`` is infer_v2's choice of the GPT's emotion vector for a
request: the clip's own, another clip's mixed in by ``emo_alpha``, or the
eight emotion weights (scaled by ``emo_alpha``) over the emotion matrices.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np
from daemon.sdk.audio.resample import SOXR_HQ, resample

from hexvoice_indextts.segment import VoiceRows
from hexvoice_indextts.voice import emotion, style
from hexvoice_indextts.voice.frames import bucket_for, padded
from hexvoice_indextts.voice.speaker import FEATURE_RATE, Speaker

if TYPE_CHECKING:
    from daemon.sdk.graphs import Runner


@dataclass(frozen=True)
class Voice:
    latents: np.ndarray  # [32, d]
    base_emotion: np.ndarray  # [d], from spk_cond_emb
    clip_emotion: np.ndarray  # [d], from the clip read at 16 kHz
    style: np.ndarray  # [192]
    prompt_condition: np.ndarray  # [P, channels]
    ref_mel: np.ndarray  # [n_mels, P]

    def arrays(self) -> dict[str, np.ndarray]:
        return {k: np.asarray(v, np.float32) for k, v in asdict(self).items()}

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> Voice:
        return cls(
            **{k: np.asarray(arrays[k], np.float32) for k in cls.__annotations__}
        )

    def rows(self, emotion_vector: np.ndarray) -> VoiceRows:
        return VoiceRows(
            self.latents, emotion_vector, self.style, self.prompt_condition,
            self.ref_mel,
        )  # fmt: skip


@dataclass(frozen=True)
class EmotionMatrices:
    """feat2.pt (emotion rows) and feat1.pt (their speaker twins), split by
    emo_num into one block per emotion."""

    emotion: list[np.ndarray]
    speaker: list[np.ndarray]

    @classmethod
    def split(
        cls, emo: np.ndarray, spk: np.ndarray, counts: Sequence[int]
    ) -> EmotionMatrices:
        return cls(emotion.split(emo, counts), emotion.split(spk, counts))


def emotion_for(
    voice: Voice,
    matrices: EmotionMatrices,
    emo_alpha: float = 1.0,
    other: np.ndarray | None = None,
    weights: Sequence[float] | None = None,
) -> np.ndarray:
    """The GPT's emotion vector as infer_v2 picks it: with ``weights`` another
    clip is ignored (upstream drops it), the weights are scaled by
    ``emo_alpha`` and the clip's own vector is merged at alpha 1."""
    if weights is not None:
        other = None
        weights = emotion.scaled_weights(weights, emo_alpha)
    alpha = emo_alpha if other is not None else 1.0
    merged = emotion.merge(
        voice.base_emotion, voice.clip_emotion if other is None else other, alpha
    )
    if weights is None:
        return merged
    return emotion.with_weights(
        merged, weights, voice.style, matrices.speaker, matrices.emotion
    )[0]


class VoiceMaker:
    def __init__(
        self,
        speaker: Speaker,
        latents: Mapping[int, Runner],
        emotion_graphs: Mapping[int, Runner],
    ) -> None:
        self.speaker, self.latents, self.emotion = speaker, latents, emotion_graphs

    def make(self, audio: np.ndarray, rate: int) -> Voice:
        c = self.speaker.condition(audio, rate)
        return Voice(
            self._run(self.latents, c.spk_cond_emb, "speaker latents"),
            self._run(self.emotion, c.spk_cond_emb, "emotion vector"),
            self.emotion_of(audio, rate),
            c.style,
            c.prompt_condition,
            c.ref_mel,
        )

    def emotion_of(self, audio: np.ndarray, rate: int) -> np.ndarray:
        clip = resample(np.asarray(audio, np.float32), rate, FEATURE_RATE, SOXR_HQ)
        hidden = self.speaker.hidden(clip[: style.MAX_SECONDS * FEATURE_RATE])
        return self._run(self.emotion, hidden, "emotion clip")

    @staticmethod
    def _run(graphs: Mapping[int, Runner], hidden: np.ndarray, what: str) -> np.ndarray:
        rows = bucket_for(len(hidden), graphs, f"{what}: w2v-BERT rows")
        cond, mask = padded(hidden, rows)
        return graphs[rows].run({"cond": cond, "mask": mask})[0][0]
