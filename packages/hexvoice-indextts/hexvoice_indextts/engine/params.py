"""What the engine reads of a bundle's ``params`` (voice.yaml), and the graphs
those params make it run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Final, Literal

import msgspec
from daemon.sdk.bundles.needs import GraphNeeds
from daemon.sdk.license import License

from hexvoice_indextts.layout import (
    ENGINE_ID,
    UtteranceBuckets,
    VoiceBuckets,
    graph_names,
)
from hexvoice_indextts.text.segments import MAX_SEGMENT_PIECES

__all__ = ["ENGINE_ID", "LANGUAGES", "LICENSE", "Params", "graph_needs"]

#: the languages upstream's normaliser reads (zh and en grammars)
LANGUAGES: Final = ("zh", "en")
LICENSE: Final = License(
    id="bilibili-model-use",
    title="bilibili Model Use License Agreement",
    text="LICENSE.txt of the hexvoice-indextts package (packages/hexvoice-indextts/)",
)


@dataclass(frozen=True)
class Params:
    utterance: UtteranceBuckets
    voice: VoiceBuckets
    #: the normaliser's language for every text (None: per text, as upstream)
    language: Literal["en", "zh"] | None = None
    #: infer's max_text_tokens_per_segment
    segment_pieces: Annotated[int, msgspec.Meta(ge=1)] = MAX_SEGMENT_PIECES


def graph_needs(p: Params) -> GraphNeeds:
    return {name: {} for name in graph_names(p.utterance, p.voice)}
