"""Text frontend of the GPT-SoVITS engine (Chinese first, English words and text).

``TextFrontend`` splits text into segments and turns a segment into v2 phone ids,
word2ph and language tags; ``G2pwResolver`` resolves polyphones with the g2pw graph.
"""

from daemon.engines.gptsovits.frontend.phonemizer import (
    Phonemes,
    TextFrontend,
    TextPart,
)
from daemon.engines.gptsovits.frontend.split import Segment, SegmentEnd, spoken_length
from daemon.engines.gptsovits.frontend.symbols import phones_to_ids, symbol_ids, symbols
from daemon.engines.gptsovits.frontend.vocab import CharVocab
from daemon.engines.gptsovits.frontend.zh.g2pw import (
    G2pwBody,
    G2pwHead,
    G2pwResolver,
    G2pwTables,
)
from daemon.engines.gptsovits.frontend.zh.polyphone import PolyphoneResolver

__all__ = [
    "CharVocab",
    "G2pwBody",
    "G2pwHead",
    "G2pwResolver",
    "G2pwTables",
    "Phonemes",
    "PolyphoneResolver",
    "Segment",
    "SegmentEnd",
    "TextFrontend",
    "TextPart",
    "phones_to_ids",
    "spoken_length",
    "symbol_ids",
    "symbols",
]
