"""The ``Engine`` protocol every TTS engine implements, and its small value types.

An engine is a plain synchronous object: the host opens the graphs (one QNN
multi-context group for every loaded bundle), hands each engine its graphs, and
iterates ``synthesize``.  The daemon runs that iteration on its single NPU worker
thread; engines know nothing about sockets, asyncio or threads.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from daemon.engine.bundle import Bundle
    from daemon.engine.graphs import GraphNeeds, Runner

#: Entry-point group under which engines register (pyproject entry-points).
ENTRY_POINT_GROUP: Final = "hexvoice.engines"
MAX_SPEED: Final = 4.0
MIN_SPEED: Final = 0.25


class Cancelled(Exception):
    """Synthesis stopped because its :class:`CancelToken` fired."""


class CancelToken:
    """Cooperative cancellation: engines call :meth:`check` between graph calls."""

    def __init__(self, deadline: float | None = None) -> None:
        self._event = threading.Event()
        self.deadline = deadline  # time.monotonic() value
        self.reason = ""

    def cancel(self, reason: str = "cancelled") -> None:
        self.reason = reason
        self._event.set()

    @property
    def cancelled(self) -> bool:
        if self._event.is_set():
            return True
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.reason = self.reason or "deadline passed"
            self._event.set()
            return True
        return False

    def check(self) -> None:
        if self.cancelled:
            raise Cancelled(self.reason)


@dataclass(frozen=True)
class SynthesisOptions:
    """Per-request options; engine-specific knobs travel in ``extra``."""

    voice: str | None = None
    #: speaker of a multi-speaker voice (validated by the host against the voice)
    speaker: str | None = None
    seed: int | None = None
    speed: float = 1.0
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not (isinstance(self.speed, int | float) and math.isfinite(self.speed)):
            raise ValueError(f"speed must be a number, got {self.speed!r}")
        if not MIN_SPEED <= self.speed <= MAX_SPEED:
            raise ValueError(f"speed {self.speed} outside [{MIN_SPEED}, {MAX_SPEED}]")
        if self.seed is not None and (
            not isinstance(self.seed, int)
            or isinstance(self.seed, bool)
            or self.seed < 0
        ):
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")


@dataclass(frozen=True)
class AudioChunk:
    """Mono float32 audio in [-1, 1] at ``sample_rate``."""

    audio: np.ndarray
    sample_rate: int
    segment: int = 0
    end_of_segment: bool = False

    @property
    def seconds(self) -> float:
        return len(self.audio) / self.sample_rate


@dataclass(frozen=True)
class VoiceInfo:
    name: str
    languages: tuple[str, ...]
    description: str = ""
    speakers: tuple[str, ...] = ()
    #: (name, url) of whoever made the voice, shown to Wyoming clients
    attribution: tuple[str, str] = ("", "")


@runtime_checkable
class Engine(Protocol):
    """What the host needs from an engine (GPT-SoVITS, Piper, ...)."""

    #: manifest ``engine`` value this class serves, e.g. ``"piper-vits"``
    engine_id: str

    @classmethod
    def requirements(cls, bundle: Bundle) -> GraphNeeds:
        """Every graph ``load`` runs, with the tensors and shapes it uses (from the
        bundle's params); ``load`` checks exactly these (``graphs.require``) and
        ``Bundle.verify`` checks the manifest against them.  BundleError if the
        params are invalid."""

    def load(self, bundle: Bundle, graphs: Mapping[str, Runner]) -> None:
        """Read CPU tables from ``bundle``; keep ``graphs`` for synthesis."""

    @property
    def sample_rate(self) -> int: ...

    def voices(self) -> list[VoiceInfo]: ...

    def warmup(self) -> None:
        """Touch every graph and lazily loaded table once."""

    def synthesize(
        self, text: str, options: SynthesisOptions, cancel: CancelToken | None = None
    ) -> Iterator[AudioChunk]:
        """Yield audio as soon as each piece is ready; raise ``Cancelled``."""

    def close(self) -> None: ...


def engine_class(engine_id: str) -> type[Engine]:
    """The class registered for ``engine_id`` under ``hexvoice.engines``."""
    found = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    if engine_id not in found:
        raise LookupError(
            f"no engine {engine_id!r} registered under {ENTRY_POINT_GROUP!r} "
            f"(installed: {sorted(found) or 'none'}; is hexvoice installed?)"
        )
    cls = found[engine_id].load()
    return cls  # type: ignore[no-any-return]
