"""A speaker clip's conditioning, what an IndexTTS-2 voice is made of:
``spk_cond_emb`` (w2v-BERT layer 17, normalised), ``style`` (CAM++),
``prompt_condition`` (the length regulator on the clip's semantic codes) and
``ref_mel`` (its mel), as upstream's ``_get_speaker_conditioning`` makes them,
on the static graphs of the buckets that hold the clip.

The clip as upstream reads it: librosa.load's 22050 Hz (librosa's own soxr HQ
resampler) cut to 15 s, and torchaudio's sinc resampler from there to 16 kHz
(the SDK's resample, daemon/sdk/audio/resample.py, does both as they do).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np
from daemon.sdk.audio.resample import SOXR_HQ, TORCHAUDIO_SINC, resample

from hexvoice_indextts.voice import semantic, style
from hexvoice_indextts.voice.frames import bucket_for, regulator_inputs
from hexvoice_indextts.voice.semantic_codes import Codebook, codec_inputs

if TYPE_CHECKING:
    from daemon.sdk.audio.log_mel import LogMel
    from daemon.sdk.graphs import Runner

#: librosa.load's default rate (upstream loads the speaker clip with it)
LOAD_RATE: Final = 22050
#: the rate of w2v-BERT's and CAM++'s input
FEATURE_RATE: Final = 16000


@dataclass(frozen=True)
class Conditioning:
    """Upstream's four arrays, without the batch dimension."""

    spk_cond_emb: np.ndarray  # [rows, 1024]
    style: np.ndarray  # [192]
    prompt_condition: np.ndarray  # [mel frames, channels]
    ref_mel: np.ndarray  # [n_mels, mel frames], upstream's layout


@dataclass(frozen=True)
class SpeakerGraphs:
    """The per-voice graphs by bucket: w2v-BERT and the semantic codec by
    feature rows, CAM++ by fbank frames, the length regulator by mel frames."""

    w2v_bert: Mapping[int, Runner]
    semantic_codec: Mapping[int, Runner]
    campplus: Mapping[int, Runner]
    length_regulator: Mapping[int, Runner]


class Speaker:
    """``condition(audio, rate)``: a mono float32 clip's Conditioning."""

    def __init__(self, graphs: SpeakerGraphs, codebook: Codebook, mel: LogMel) -> None:
        self.graphs, self.codebook, self.mel = graphs, codebook, mel

    def condition(self, audio: np.ndarray, rate: int) -> Conditioning:
        clip = resample(np.asarray(audio, np.float32), rate, LOAD_RATE, SOXR_HQ)
        clip = clip[: style.MAX_SECONDS * LOAD_RATE]
        clip16 = resample(clip, LOAD_RATE, FEATURE_RATE, TORCHAUDIO_SINC)
        hidden = self.hidden(clip16)
        codes = self.codebook.codes(self._latents(hidden))
        ref_mel = self.mel(clip)  # [frames, n_mels]
        return Conditioning(
            hidden,
            style.style(self.graphs.campplus, style.style_features(clip16))[0],
            self._regulate(self.codebook.embed(codes), len(ref_mel)),
            np.ascontiguousarray(ref_mel.T),
        )

    def hidden(self, clip16: np.ndarray) -> np.ndarray:
        """w2v-BERT's normalised layer-17 rows [n, 1024] of a 16 kHz clip."""
        features, mask = semantic.w2v_features(clip16)
        n = len(features)
        rows = bucket_for(n, self.graphs.w2v_bert, "speaker clip: w2v-BERT rows")
        out = self.graphs.w2v_bert[rows].run(
            semantic.bucket_inputs(features, mask, rows)
        )
        return out[0][0, :n]

    def _latents(self, hidden: np.ndarray) -> np.ndarray:
        n = len(hidden)
        rows = bucket_for(n, self.graphs.semantic_codec, "speaker clip: codec rows")
        return self.graphs.semantic_codec[rows].run(codec_inputs(hidden, rows))[0][
            0, :n
        ]

    def _regulate(self, s_ref: np.ndarray, frames: int) -> np.ndarray:
        bucket = bucket_for(
            frames, self.graphs.length_regulator, "speaker clip: mel frames"
        )
        inputs = regulator_inputs(s_ref, frames, bucket)
        return self.graphs.length_regulator[bucket].run(inputs)[0][0, :frames]
