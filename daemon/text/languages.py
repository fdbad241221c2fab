"""Languages as the protocols name them: upstream's names, and the rule.

Every protocol follows one rule for a language:

* a request's ``language`` is a code ("en", "en_US", "en-GB") or upstream's
  name in any case ("English", "english": qwen-asr's
  ``normalize_language_name`` capitalises whatever it is given); the one check
  matches either against the model's codes (daemon/text/tags.py), and
  refuses any other with the codes and names it takes;
* a response names the language as qwen-asr's ``transcribe`` does: upstream's
  name ("English"), the segments' names joined by commas where they differ
  ("Chinese,English", upstream's ``merge_languages``), "" when none was heard;
  OpenAI's verbose_json adds ``language_code``, the same as codes ("en",
  "zh,en"), for clients that match codes (:func:`reported`); a Wyoming
  ``transcript`` (and ``transcript-start``) has the name alone, as the wyoming
  library's Transcript reads no other key (:func:`transcript_language`).

OpenAI's own API answers verbose_json ``language`` in lower case ("english",
Whisper's names); the name here keeps upstream's case, the model's own answer,
which any of these protocols (and qwen-asr) takes back as a ``language``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from daemon.text.tags import LANGUAGE_CODES, as_code, code_of, family

__all__ = ["LANGUAGE_CODES", "code_of", "name_of", "reported", "transcript_language"]

#: How upstream joins the languages of an utterance's chunks (merge_languages).
MERGE_SEPARATOR: Final = ","


def name_of(language: str) -> str:
    """Upstream's name of a code ("en", "en_US", "en-GB") or of a name in any
    case ("english"); anything else as it is (stripped)."""
    s = language.strip()
    code = code_of(s)
    if code is not None:
        return LANGUAGE_CODES[code]
    return LANGUAGE_CODES.get(family(s), s)


def _merge(items: Iterable[str]) -> str:
    out: list[str] = []
    for x in items:
        if x and (not out or out[-1] != x):
            out.append(x)
    return MERGE_SEPARATOR.join(out)


def reported(languages: Iterable[str | None]) -> tuple[str, str]:
    """(names, codes) of the languages of an utterance's segments in order,
    each merged as upstream merges its chunks: empty ones skipped, a run of
    the same one kept once ("Chinese,English", "zh,en"); ("", "") for none."""
    names = [name_of(x) for x in languages if x and x.strip()]
    return _merge(names), _merge(code_of(n) or as_code(n) for n in names)


def transcript_language(
    hint: str | None, heard: Iterable[str | None] = ()
) -> str | None:
    """The name(s) a transcript gives: what its segments ``heard``, merged,
    else the request's ``hint`` as a name; None when there is neither."""
    names = reported(heard)[0] or reported([hint])[0]
    return names or None
