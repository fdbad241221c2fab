"""Cloning for the Base checkpoint: a clip in, its x-vector as a ``VoicePrint``.

The print holds the float32 x-vector [D] under ``arrays["xvector"]`` (the
speaker row of the prompt, upstream ``generate_speaker_prompt``) and is valid
for one speaker encoder: ``model`` is a content id of the bundle's
``speaker_<F>`` graphs (their manifest sha256s), so a rebuilt bundle or another
checkpoint never speaks with another encoder's prints.  Only x-vector cloning:
the transcript (upstream's ICL mode, the Mimi encoder) is not used.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from daemon.engines.qwen3.tts.params import ENGINE_ID, speaker_key
from daemon.engines.qwen3.tts.xvector import XVector, mono
from daemon.sdk.cloning import CloneRequest, Cloning, VoicePrint

if TYPE_CHECKING:
    from daemon.engines.qwen3.tts.params import TtsParams
    from daemon.sdk.cancel import CancelToken
    from daemon.sdk.graphs import Runner

XVECTOR: Final = "xvector"
#: the longest clip taken (s); the encoder sees its loudest largest-bucket
#: span, so this only bounds the resampling work and the upload
MAX_CLIP_SECONDS: Final = 60.0
#: rates a clip may come at (telephone to studio)
MIN_RATE: Final = 8000
MAX_RATE: Final = 192000
#: a clip whose peak is below -60 dBFS holds no voice to take
SILENCE_PEAK: Final = 1e-3


def speaker_model_id(p: TtsParams, specs: Mapping[str, Any]) -> str:
    """sha256 over the ``speaker_<F>`` graphs' (key, sha256) in the manifest
    (``Bundle.graphs``: GraphSpec per key)."""
    assert p.xvector is not None
    h = hashlib.sha256(ENGINE_ID.encode())
    for f in p.xvector.frame_buckets:
        key = speaker_key(f)
        h.update(f"|{key}={specs[key].sha256}".encode())
    return h.hexdigest()


def check_clip(audio: Any, sample_rate: Any) -> np.ndarray:
    """The clip as float32 mono [n]; ValueError saying what is wrong with it
    (the part the encoder takes is checked for silence again)."""
    if isinstance(sample_rate, bool) or not isinstance(sample_rate, int | np.integer):
        raise ValueError(f"qwen3-tts: sample rate {sample_rate!r} is not an integer")
    if not MIN_RATE <= sample_rate <= MAX_RATE:
        raise ValueError(
            f"qwen3-tts: sample rate {sample_rate} Hz: expected "
            f"{MIN_RATE}..{MAX_RATE} Hz"
        )
    a = np.asarray(audio)
    # integer PCM has no agreed scale (int16? int32?): the caller converts
    if a.dtype.kind != "f" or a.size == 0:
        raise ValueError(
            f"qwen3-tts: the clip must be non-empty float samples in [-1, 1], "
            f"got {a.dtype} {list(a.shape)}"
        )
    pcm = mono(a)
    if not np.isfinite(pcm).all():
        bad = int(np.count_nonzero(~np.isfinite(pcm)))
        raise ValueError(f"qwen3-tts: the clip has {bad} NaN or infinite samples")
    seconds = len(pcm) / sample_rate
    if seconds > MAX_CLIP_SECONDS:
        raise ValueError(
            f"qwen3-tts: the clip is {seconds:.1f} s; at most "
            f"{MAX_CLIP_SECONDS:.0f} s is taken"
        )
    if float(np.max(np.abs(pcm))) < SILENCE_PEAK:
        raise ValueError("qwen3-tts: the clip is silent (peak below -60 dBFS)")
    return pcm


class Cloner:
    """The engine's ``clone``: x-vectors from the bundle's speaker encoder."""

    def __init__(
        self,
        p: TtsParams,
        graphs: Mapping[str, Runner],
        mel_basis: np.ndarray,
        model_id: str,
    ) -> None:
        self.xvector = XVector(p, graphs, mel_basis)
        self.model_id = model_id

    @property
    def capability(self) -> Cloning:
        """``Capabilities.cloning``: clips from the shortest the encoder
        takes (``XVector.min_seconds``, upstream's own limit, rounded up to the
        ms so a clip of that many seconds fits) to MAX_CLIP_SECONDS; no
        transcript."""
        low = math.ceil(self.xvector.min_seconds * 1000) / 1000
        return Cloning(self.model_id, low, MAX_CLIP_SECONDS, "unused")

    def clone(self, req: CloneRequest, cancel: CancelToken | None = None) -> VoicePrint:
        """The print of ``req.audio`` (mono [n] or [n, channels]); its
        transcript is not used (x-vector cloning)."""
        if cancel is not None:
            cancel.check()
        sample_rate = req.sample_rate
        pcm = check_clip(req.audio, sample_rate)
        clip, start = self.xvector.cut(pcm, int(sample_rate))
        if float(np.max(np.abs(clip))) < SILENCE_PEAK:
            raise ValueError("qwen3-tts: the clip is silent (peak below -60 dBFS)")
        vec = self.xvector.embed_mel(self.xvector.mel(clip), cancel)
        if not np.isfinite(vec).all():
            raise ValueError(
                "qwen3-tts: the speaker encoder gave a non-finite x-vector"
            )
        x = self.xvector.x
        meta = {
            "sample_rate": int(sample_rate),
            "seconds": round(len(pcm) / sample_rate, 3),
            "used_seconds": round(len(clip) / x.sample_rate, 3),
            "start_seconds": round(start / x.sample_rate, 3),
            "frames": len(clip) // x.hop,
        }
        return VoicePrint(ENGINE_ID, self.model_id, {XVECTOR: vec}, meta)
