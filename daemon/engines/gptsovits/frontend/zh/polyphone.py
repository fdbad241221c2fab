"""Per-character base readings and the polyphone resolver interface.

Upstream reads every char of a sentence with pypinyin and lets g2pW (a BERT model)
pick the reading of the chars it knows to be polyphonic. Here the model is optional:
a ``PolyphoneResolver`` (the engine backs it with the ``g2pw`` NPU graph, see
``daemon.engines.gptsovits.frontend.zh.g2pw``) may overwrite the pypinyin
readings; without one, pypinyin's sentence-level choice stands.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from pypinyin import Style, pinyin

from daemon.engines.gptsovits.frontend._data import polyphonic_words

if TYPE_CHECKING:
    from daemon.sdk.cancel import CancelToken

_HAN_FIRST, _HAN_LAST = "\u4e00", "\u9fa5"


class PolyphoneResolver(Protocol):
    """Picks tone3 readings ("hang2") for the chars of normalized sentences.

    ``resolve`` gets sentences of ideographs and punctuation only and returns, per
    sentence, one entry per char: a tone3 reading, or None to keep pypinyin's. A
    resolver that runs a graph checks ``cancel`` before each graph call, so that a
    cancelled request stops within one call.
    """

    def resolve(
        self, sentences: Sequence[str], cancel: CancelToken | None = None
    ) -> list[list[str | None]]: ...


def pypinyin_readings(sentence: str) -> list[str]:
    """pypinyin's tone3 reading of each char (neutral tone as 5); non-Han chars as is.

    pypinyin returns a run of non-Han chars as one item; it is spread back onto
    its chars so that entry i always belongs to char i.
    """
    items = pinyin(sentence, style=Style.TONE3, neutral_tone_with_five=True)
    out: list[str] = []
    for (reading,) in (item[:1] for item in items):
        at = len(out)
        if at < len(sentence) and not _HAN_FIRST <= sentence[at] <= _HAN_LAST:
            if sentence.startswith(reading, at):
                out.extend(reading)
                continue
        out.append(reading)
    if len(out) != len(sentence):
        raise RuntimeError(f"pypinyin returned {len(out)} readings for {sentence!r}")
    return out


def correct_pronunciation(word: str, readings: list[str]) -> list[str]:
    """Upstream g2pw.correct_pronunciation: the polyphone dictionary overrides.

    A whole-word entry replaces all readings; otherwise a single-char entry replaces
    that char's reading by its first listed reading.
    """
    table = polyphonic_words()
    entry = table.get(word)
    if entry is not None:
        return list(entry)
    for i, char in enumerate(word):
        char_entry = table.get(char)
        if char_entry is not None:
            readings[i] = char_entry[0]
    return readings
