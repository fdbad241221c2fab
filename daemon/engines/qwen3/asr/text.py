"""Generated tokens to text: streamed pieces, and upstream's final parse.

Upstream decodes the whole output once (``batch_decode(skip_special_tokens=
True)``) and parses it (inference/utils.py ``parse_asr_output``): repetitions
collapsed (``detect_and_fix_repetitions``), then split at the first
``<asr_text>``; the part before holds ``language X`` ("None" for empty audio).
:class:`TextStream` decodes while tokens arrive with the same tokenizer, holding
back a byte-level BPE piece that ends inside a UTF-8 character, so the pieces
joined are exactly the whole output's decode.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from tokenizers import Tokenizer

ASR_TEXT_TAG: Final = "<asr_text>"
LANGUAGE_PREFIX: Final = "language "
#: what "language None" (upstream's empty-audio answer) reads as, lowercased
NO_LANGUAGE: Final = "language none"
#: detect_and_fix_repetitions(text, threshold=20), max_len=20 in upstream
REPEAT_THRESHOLD: Final = 20
REPEAT_MAX_PATTERN: Final = 20
#: what a decode ending inside a UTF-8 character shows at its end
_INCOMPLETE: Final = "\ufffd"


class TextStream:
    """Incremental detokenisation (the prefix/read-offset scheme of vLLM and
    HF's TextStreamer): each token's new text once it is whole."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self.ids: list[int] = []
        self.text = ""
        self._prefix = 0  # ids before this are emitted and never re-decoded
        self._read = 0  # ids before this are emitted

    def _decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def push(self, token: int) -> str:
        """The text ``token`` completes ("" while a character is unfinished)."""
        self.ids.append(token)
        before = self._decode(self.ids[self._prefix : self._read])
        now = self._decode(self.ids[self._prefix :])
        if len(now) <= len(before) or now.endswith(_INCOMPLETE):
            return ""
        piece = now[len(before) :]
        self._prefix, self._read = self._read, len(self.ids)
        self.text += piece
        return piece

    def flush(self) -> str:
        """At the end: whatever is held back (as the whole decode shows it)."""
        whole = self._decode(self.ids)
        piece = whole[len(self.text) :] if whole.startswith(self.text) else ""
        self.text += piece
        return piece


def partial_text(raw: str, forced: bool) -> str:
    """The transcript so far of a raw output that is still growing: what follows
    the first ``<asr_text>`` (everything when the prompt forced the language),
    left-stripped; it only grows as ``raw`` does."""
    if forced:
        return raw.lstrip()
    head, tag, text = raw.partition(ASR_TEXT_TAG)
    return text.lstrip() if tag else ""


def _collapse_char_runs(s: str, times: int) -> str:
    """A character repeated more than ``times`` times in a row becomes one."""
    out, i, n = [], 0, len(s)
    while i < n:
        j = i + 1
        while j < n and s[j] == s[i]:
            j += 1
        out.append(s[i] if j - i > times else s[i:j])
        i = j
    return "".join(out)


def _first_repeat(s: str, times: int, longest: int) -> tuple[int, int, int] | None:
    """(start, pattern length, end) of the first pattern of 1..``longest``
    chars repeated ``times`` or more times in a row, scanning starts left to
    right and, at each, lengths shortest first; ``end`` follows its last copy."""
    n = len(s)
    for i in range(n - 2 * times + 1):
        for k in range(1, longest + 1):
            if i + k * times > n:
                break
            pattern = s[i : i + k]
            if s[i : i + k * times] == pattern * times:
                end = i + k * times
                while s[end : end + k] == pattern and end + k <= n:
                    end += k
                return i, k, end
    return None


def _collapse_patterns(s: str, times: int, longest: int) -> str:
    """Each run found by :func:`_first_repeat` becomes one copy of its pattern;
    the search goes on after the run (upstream recurses on the rest)."""
    out = []
    while len(s) >= 2 * times:
        hit = _first_repeat(s, times, longest)
        if hit is None:
            break
        i, k, end = hit
        out.append(s[: i + k])
        s = s[end:]
    out.append(s)
    return "".join(out)


def fix_repetitions(text: str, times: int = REPEAT_THRESHOLD) -> str:
    """Upstream ``detect_and_fix_repetitions``: char runs, then patterns."""
    return _collapse_patterns(_collapse_char_runs(text, times), times,
                              REPEAT_MAX_PATTERN)  # fmt: skip


@dataclass(frozen=True)
class Parsed:
    language: str  # upstream's name ("English"), "" if unknown or empty audio
    text: str


def _language_name(value: str) -> str:
    return value[:1].upper() + value[1:].lower()


def parse(raw: str | None, forced_language: str | None = None) -> Parsed:
    """Upstream ``parse_asr_output``: (language, text) of a raw decode."""
    s = (raw or "").strip()
    if not s:
        return Parsed("", "")
    s = fix_repetitions(s)
    if forced_language:
        return Parsed(forced_language, s)
    meta, tag, text = s.partition(ASR_TEXT_TAG)
    if not tag:
        return Parsed("", s.strip())
    return Parsed(meta_language(meta), text.strip())


def meta_language(meta: str) -> str:
    """The language upstream reads from the part before ``<asr_text>``: the
    first ``language X`` line, "" for "language None" (empty audio)."""
    if NO_LANGUAGE in meta.lower():
        return ""
    for line in meta.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.lower().startswith(LANGUAGE_PREFIX):  # other lines are skipped
            value = line[len(LANGUAGE_PREFIX) :].strip()
            return _language_name(value) if value else ""
    return ""
