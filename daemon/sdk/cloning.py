"""Voices made from a clip at run time: the ``VoicePrint`` an engine computes
once, and the ``CloningEngine`` base that computes it (through the engine's
``Cloner``).

One store and one API serve every engine that clones (Qwen3-TTS Base: an
x-vector; GPT-SoVITS zero-shot: prompt tokens, ``ge``, the sv embedding, the
prompt's phones): the service keeps a print as opaque named arrays plus small
metadata and hands it back in ``SynthesisOptions.voice_print``.  Only the engine
that made a print reads its arrays.

A print is valid only for what made it: ``model`` is a content id the engine
chooses (e.g. the sha256 of its speaker-encoder graph), declared again by the
loaded engine in ``Capabilities.cloning.model``.  A stored voice whose model no
loaded engine declares is not offered (``unfit`` says why), so a rebuilt bundle
never speaks with prints of another encoder.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import ClassVar, Final, Literal, Protocol

import numpy as np

from daemon.sdk.cancel import CancelToken

#: Array and metadata keys: plain identifiers (they name fields in a stored file).
KEY: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
#: What a print's arrays may hold: numbers (a stored file carries dtype + bytes).
DTYPES: Final = frozenset(
    {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8"}
)
Meta = str | int | float
#: Whether a clone needs the clip's transcript: Qwen3-TTS's x-vector does not,
#: GPT-SoVITS's prompt does.
TranscriptUse = Literal["unused", "optional", "required"]
#: More clips of the same voice (upstream GPT-SoVITS's ``aux_ref_audio_paths``):
#: each (float32 mono samples, sample rate).
AuxClips = Sequence[tuple[np.ndarray, int]]


@dataclass(frozen=True)
class VoicePrint:
    """What an engine computed from a clip: enough to speak in that voice.

    ``arrays`` are copied and frozen (read-only) on construction, so a print
    shared by queued requests cannot change under them.
    """

    engine_id: str
    #: content id of what the print is valid for (``Cloning.model``)
    model: str
    arrays: Mapping[str, np.ndarray]
    meta: Mapping[str, Meta] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for what, value in (("engine_id", self.engine_id), ("model", self.model)):
            if not isinstance(value, str) or not value:
                raise ValueError(f"VoicePrint.{what}: expected a non-empty string")
        frozen = {}
        for key, a in self.arrays.items():
            _key(key, "arrays")
            arr = np.array(a, copy=True)
            if arr.dtype.name not in DTYPES:
                raise ValueError(
                    f"VoicePrint.arrays[{key!r}]: expected one of {sorted(DTYPES)}, "
                    f"found {arr.dtype.name}"
                )
            arr.flags.writeable = False
            frozen[key] = arr
        for key, v in self.meta.items():
            _key(key, "meta")
            if isinstance(v, bool) or not isinstance(v, str | int | float):
                raise ValueError(
                    f"VoicePrint.meta[{key!r}]: expected str, int or float"
                )
        object.__setattr__(self, "arrays", MappingProxyType(frozen))
        object.__setattr__(self, "meta", MappingProxyType(dict(self.meta)))

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays.values())


def _key(key: object, where: str) -> None:
    if not isinstance(key, str) or not KEY.match(key):
        raise ValueError(f"VoicePrint.{where}: key {key!r} is not an identifier")


@dataclass(frozen=True)
class Cloning:
    """What a cloning engine declares (``Capabilities.cloning``)."""

    #: content id every print it makes carries, and every print it takes must
    model: str
    #: clip length it takes, inclusive (s); the service refuses others first
    min_seconds: float
    max_seconds: float
    transcript: TranscriptUse = "unused"
    #: more clips of the same voice it averages in (``clone(aux=...)``); 0: none
    max_aux: int = 0
    #: "required": registering a voice needs the caller's consent statement
    #: (an engine whose licence asks for one); "optional": the service's
    #: ``voice_store.require_consent`` decides
    consent: Literal["optional", "required"] = "optional"

    def __post_init__(self) -> None:
        if self.max_aux < 0:
            raise ValueError(f"Cloning.max_aux must be >= 0, found {self.max_aux}")
        if not self.model:
            raise ValueError("Cloning.model must be a non-empty content id")
        if not 0 < self.min_seconds <= self.max_seconds:
            raise ValueError(
                "Cloning: expected 0 < min_seconds <= max_seconds, found "
                f"{self.min_seconds, self.max_seconds}"
            )

    def check(self, engine_id: str, transcript: str | None, aux: AuxClips) -> None:
        """What these rules refuse before an engine computes anything: no
        transcript where it is required, more than ``max_aux`` aux clips.
        The service checks both first with its own errors; this holds for a
        direct caller (ValueError naming ``engine_id``)."""
        if self.transcript == "required" and not (transcript or "").strip():
            raise ValueError(f"{engine_id}: the clip's transcript is required")
        if len(aux) > self.max_aux:
            raise ValueError(
                f"{engine_id}: at most {self.max_aux} aux clip(s), got {len(aux)}"
            )


@dataclass(frozen=True)
class CloneRequest:
    """One ``CloningEngine.clone`` call as the engine's ``Cloner`` takes it."""

    #: the clip: float32 samples in [-1, 1] at ``sample_rate`` (mono [n] from
    #: the service; a cloner may take more, e.g. channels)
    audio: np.ndarray
    sample_rate: int
    #: what the clip says (None: not given)
    transcript: str | None
    #: the clip's language (None: the engine's choice)
    language: str | None = None
    aux: AuxClips = ()


class Cloner(Protocol):
    """What computes an engine's prints (its clip encoder graphs), built at
    ``load`` where the bundle has them."""

    @property
    def capability(self) -> Cloning: ...

    def clone(
        self, req: CloneRequest, cancel: CancelToken | None = None
    ) -> VoicePrint: ...


class CloningEngine(ABC):
    """A TTS engine that makes voices from a clip (declares ``cloning``).

    The service calls ``clone``; the engine says which ``Cloner`` its loaded
    bundle has, and in ``no_cloner`` why a bundle without one does not clone.
    """

    engine_id: ClassVar[str]
    #: ``clone``'s ValueError for a loaded bundle without a cloner
    no_cloner: ClassVar[str]

    @abstractmethod
    def cloner(self) -> Cloner | None:
        """The loaded bundle's cloner; None: this bundle does not clone."""

    def clone(
        self,
        audio: np.ndarray,
        sample_rate: int,
        transcript: str | None = None,
        cancel: CancelToken | None = None,
        *,
        language: str | None = None,
        aux: AuxClips = (),
    ) -> VoicePrint:
        """The print of ``audio`` (float32 mono ``[n]`` in [-1, 1] at
        ``sample_rate``, any rate: the engine resamples), checking ``cancel``
        between graph calls.  Its length was checked against ``Cloning``'s
        bounds; a clip the engine still cannot use raises ``ValueError``
        (reported to the client as a bad request), as does what
        ``Cloning.check`` refuses.  ``language`` is the clip's (checked
        against the engine voice's languages; None: the engine's choice);
        ``aux`` are at most ``Cloning.max_aux`` more clips of the same voice,
        each checked like ``audio``."""
        cloner = self.cloner()
        if cloner is None:
            raise ValueError(f"{self.engine_id}: {self.no_cloner}")
        cloner.capability.check(self.engine_id, transcript, aux)
        req = CloneRequest(audio, sample_rate, transcript, language, aux)
        return cloner.clone(req, cancel)


def unfit(vp: VoicePrint, engine_id: str, cloning: Cloning | None) -> str | None:
    """Why ``vp`` cannot speak through an engine ``engine_id`` declaring
    ``cloning`` (None: it can)."""
    if vp.engine_id != engine_id:
        return f"made by engine {vp.engine_id}, not {engine_id}"
    if cloning is None:
        return f"engine {engine_id} here does not clone (a bundle without its encoder)"
    if vp.model != cloning.model:
        return (
            f"made with model {vp.model[:12]}, the loaded bundle's is "
            f"{cloning.model[:12]} (rebuilt or another checkpoint: add it again)"
        )
    return None
