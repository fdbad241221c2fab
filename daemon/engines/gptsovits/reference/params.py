"""``voice.yaml`` → ``params.reference``: the static sizes of the reference-side
graphs.  Absent in bundles built without ``--hubert``/``--sv``: such a bundle
speaks its built-in voices but does not clone.

Facts: docs/gpt-sovits.md, reference audio (clip bounds, the appended zeros),
SoVITS decode (ref_enc on the lowest 704 bins), speaker verification (fbank,
ERes2NetV2 output width).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from daemon.config.fields import Count
from daemon.config.reader import read
from daemon.engines.gptsovits.reference import spectrogram
from daemon.sdk.audio import fbank

#: TTS._set_prompt_semantic refuses a 16 kHz reference outside 3..10 s
#: ("参考音频在3~10秒范围外").
MIN_REF_SECONDS: Final = 3.0
MAX_REF_SECONDS: Final = 10.0
#: HuBERT's input rate (librosa.load(path, sr=16000)).
HUBERT_RATE: Final = 16000
#: Upstream appends int(32000 * 0.3) zeros to the *16 kHz* signal: 0.6 s, kept.
PROMPT_ZEROS: Final = int(32000 * 0.3)

#: spectrogram_torch's rate (s2v2Pro.json data.sampling_rate): samples // HOP frames
SPEC_RATE: Final = 32000


@dataclass(frozen=True)
class ReferenceParams:
    """Static sizes of the four reference-side graphs (``params.reference``)."""

    #: 16 kHz samples of the ``hubert`` window: the longest reference plus
    #: PROMPT_ZEROS (full size 10 s + 0.6 s = 169600)
    hubert_samples: Count
    #: linear-spectrogram frames ``ref_enc`` takes (32 kHz, hop 640; full 500)
    spec_frames: Count
    #: kaldi fbank frames ``sv`` takes (16 kHz, 25 ms / 10 ms; full 998)
    fbank_frames: Count
    #: width of the sv embedding (ERes2NetV2 channels x frequency; full 20480)
    sv_dim: Count

    @property
    def max_seconds(self) -> float:
        """The longest reference all four windows hold: upstream's 10 s at full
        size, less in a bundle built with smaller windows (the tiny test
        voice's), so the service refuses such a clip up front, by its length."""
        return min(
            MAX_REF_SECONDS,
            (self.hubert_samples - PROMPT_ZEROS) / HUBERT_RATE,
            # the most samples giving at most that many frames
            ((self.spec_frames + 1) * spectrogram.HOP - 1) / SPEC_RATE,
            (self.fbank_frames * fbank.SHIFT + fbank.FRAME - 1) / HUBERT_RATE,
        )

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], where: str = "") -> ReferenceParams:
        return read(data, cls, where=where)

    def to_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in self.__dataclass_fields__}
