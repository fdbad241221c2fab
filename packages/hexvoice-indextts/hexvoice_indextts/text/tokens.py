"""Text to the GPT's SentencePiece pieces and ids, as upstream's
``TextTokenizer`` (indextts/utils/front.py) encodes: normalise, space out CJK
characters and upper-case the rest (utils/common.tokenize_by_CJK_char), then
the BPE. A text of one visible character skips both steps, as upstream's does.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

from hexvoice_indextts.text.normalize import Normalizer

#: utils/common.tokenize_by_CJK_char's ranges (from NLTK's tokenize util).
CJK_RANGES: Final = re.compile(
    r"([\u1100-\u11ff\u2e80-\ua4cf\ua840-\uD7AF\uF900-\uFAFF\uFE30-\uFE4F"
    r"\uFF65-\uFFDC\U00020000-\U0002FFFF])"
)


def spaced_upper(text: str) -> str:
    """CJK characters one per word, everything else upper-cased."""
    words = (w.strip() for w in CJK_RANGES.split(text.strip()))
    return " ".join(w.upper() for w in words if w)


class Tokenizer:
    def __init__(self, bpe_model: Path, normalizer: Normalizer | None) -> None:
        import sentencepiece

        self.normalizer = normalizer
        self._sp = sentencepiece.SentencePieceProcessor(model_file=str(bpe_model))
        self.unk_id: int = self._sp.unk_id()

    def pieces(self, text: str) -> list[str]:
        if not text:
            return []
        if len(text.strip()) > 1:
            if self.normalizer is not None:
                text = self.normalizer.normalize(text)
            text = spaced_upper(text)
        return self._sp.Encode(text, out_type=str)

    def ids(self, pieces: list[str]) -> list[int]:
        return [self._sp.PieceToId(p) for p in pieces]

    def unknown(self, pieces: list[str]) -> list[str]:
        """The pieces the BPE does not know (upstream warns about them)."""
        return [p for p in pieces if self._sp.PieceToId(p) == self.unk_id]
