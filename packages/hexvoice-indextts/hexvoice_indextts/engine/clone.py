"""Cloning: a clip in, its IndexTTS-2 voice (voice/maker.py) as a
``VoicePrint``: the GPT's speaker latents, the clip's two emotion vectors,
the CAM++ style, the prompt condition and mel, float32, no audio.  Valid for
one set of per-voice graphs: ``model`` is a content id of their manifest
entries, so a rebuilt bundle never speaks with another model's prints.
Registering a voice needs the caller's consent (the licence's terms on
voices of real people, docs/upstream.md)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from daemon.sdk.cloning import CloneRequest, Cloning, VoicePrint

from hexvoice_indextts.layout import ENGINE_ID
from hexvoice_indextts.voice import style
from hexvoice_indextts.voice.maker import Voice, VoiceMaker

if TYPE_CHECKING:
    from daemon.sdk.cancel import CancelToken

#: the shortest clip taken (s): CAM++ needs a few frames and w2v-BERT a row
MIN_SECONDS: Final = 0.5
#: upstream reads at most 15 s of the speaker clip; a longer one is cut so
MAX_SECONDS: Final = 60.0
TAKEN_SECONDS: Final = float(style.MAX_SECONDS)
#: a clip whose peak is below -60 dBFS holds no voice to take
SILENCE_PEAK: Final = 1e-3


def model_id(specs: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    h = hashlib.sha256(ENGINE_ID.encode())
    for key in keys:
        h.update(f"|{key}={specs[key].sha256}".encode())
    return h.hexdigest()


def voice_of(vp: VoicePrint) -> Voice:
    """The voice a print holds; ValueError when it is not one of ours."""
    need = sorted(Voice.__annotations__)
    if vp.engine_id != ENGINE_ID or sorted(vp.arrays) != need:
        raise ValueError(
            f"{ENGINE_ID}: the cloned voice was made by {vp.engine_id!r} "
            f"(arrays {sorted(vp.arrays)}), not by an {ENGINE_ID} bundle"
        )
    return Voice.from_arrays(vp.arrays)


class IndexCloner:
    def __init__(self, maker: VoiceMaker, model: str, max_seconds: float) -> None:
        self.maker, self.model = maker, model
        self._capability = Cloning(
            model=model, min_seconds=MIN_SECONDS, max_seconds=max_seconds,
            transcript="unused", consent="required",
        )  # fmt: skip

    @property
    def capability(self) -> Cloning:
        return self._capability

    def clone(self, req: CloneRequest, cancel: CancelToken | None = None) -> VoicePrint:
        audio = np.asarray(req.audio, np.float32)
        if audio.ndim != 1 or not np.isfinite(audio).all():
            raise ValueError(f"{ENGINE_ID}: the clip must be finite mono samples")
        if float(np.max(np.abs(audio), initial=0.0)) < SILENCE_PEAK:
            raise ValueError(f"{ENGINE_ID}: the clip is silent (peak below -60 dBFS)")
        if cancel is not None:
            cancel.check()
        voice = self.maker.make(audio, req.sample_rate)
        seconds = min(len(audio) / req.sample_rate, TAKEN_SECONDS)
        return VoicePrint(ENGINE_ID, self.model, voice.arrays(), {"seconds": seconds})
