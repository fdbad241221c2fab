"""Text frontend of the GPT-SoVITS engine (Chinese first, English words and text).

``TextFrontend`` splits text into segments and turns a segment into v2 phone ids,
word2ph and language tags; ``G2pwResolver`` resolves polyphones with the g2pw graph.
"""

from daemon.text.frontend import Phonemes, TextFrontend, TextPart
from daemon.text.g2pw import G2pwBody, G2pwHead, G2pwResolver, G2pwTables
from daemon.text.polyphone import PolyphoneResolver
from daemon.text.split import Segment, SegmentEnd, spoken_length
from daemon.text.symbols import phones_to_ids, symbol_ids, symbols
from daemon.text.vocab import CharVocab

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
