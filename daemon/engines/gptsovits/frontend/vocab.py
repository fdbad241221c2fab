"""BERT vocabulary lookup for the char-level inputs of the g2pw and bert graphs."""

from __future__ import annotations

from pathlib import Path


class CharVocab:
    """Char-level BERT tokenization with a WordPiece vocab file (one token a line).

    The frontend only feeds ideographs and single punctuation chars, for which BERT's
    tokenizer yields exactly one token per (lower-cased) char.
    """

    def __init__(self, path: str | Path) -> None:
        tokens = Path(path).read_text(encoding="utf-8").split("\n")
        self.ids = {tok: i for i, tok in enumerate(t.strip() for t in tokens) if tok}
        for special in ("[CLS]", "[SEP]", "[UNK]", "[PAD]"):
            if special not in self.ids:
                raise ValueError(f"vocab {path} has no {special} token")
        self.cls, self.sep = self.ids["[CLS]"], self.ids["[SEP]"]
        self.unk, self.pad = self.ids["[UNK]"], self.ids["[PAD]"]

    def encode(self, text: str) -> list[int]:
        return [self.ids.get(c, self.unk) for c in text.lower()]
