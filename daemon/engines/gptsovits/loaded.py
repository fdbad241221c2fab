"""What a loaded ``gpt-sovits-v2pro`` bundle is made of (engine.py's model),
and the engine's running totals."""

from __future__ import annotations

from dataclasses import dataclass

from daemon.engines.gptsovits.cloning.clone import Cloner
from daemon.engines.gptsovits.layout import GsvParams
from daemon.engines.gptsovits.t2s import T2S
from daemon.engines.gptsovits.tables import Reference
from daemon.engines.gptsovits.text import TextStack
from daemon.engines.gptsovits.vits import Vits
from daemon.sdk.bundles.manifest import Bundle


@dataclass
class EngineStats:
    """Where the host's time went, over all requests (for benchmarks)."""

    frontend_seconds: float = 0.0  # split + phonemize, incl. g2pw graph calls
    segments: int = 0
    resplits: int = 0
    kept_capped: int = 0  # unsplittable segments kept at the token cap


@dataclass(frozen=True)
class Loaded:
    """One bundle, loaded: its params, voices and runtimes."""

    bundle: Bundle
    params: GsvParams
    voices: dict[str, Reference]
    text: TextStack
    t2s: T2S
    vits: Vits
    #: zero-shot voices (cloning/clone.py): None without the four graphs
    cloner: Cloner | None
