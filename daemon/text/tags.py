"""Language tags: which a request may use, and how one matches a declaration.

An engine declares codes ("en_US", "zh"); a request may name a language by a
code ("en", "en_US", "en-GB") or by the English name the Qwen3 models use, in
any case ("English", "english": qwen-asr's ``normalize_language_name``
capitalises whatever it is given).  ``speaks`` matches either; a refusal lists
the codes and their names (``described``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Final

#: ISO 639 code -> the English name Qwen3 uses: qwen-asr's SUPPORTED_LANGUAGES
#: (inference/utils.py) and qwen-tts's codec_language_id keys (lower case), so
#: clients may say "zh" or "en_US" as well as "Chinese".
LANGUAGE_CODES: Final = {
    "zh": "Chinese", "en": "English", "yue": "Cantonese", "ar": "Arabic",
    "de": "German", "fr": "French", "es": "Spanish", "pt": "Portuguese",
    "id": "Indonesian", "it": "Italian", "ko": "Korean", "ru": "Russian",
    "th": "Thai", "vi": "Vietnamese", "ja": "Japanese", "tr": "Turkish",
    "hi": "Hindi", "ms": "Malay", "nl": "Dutch", "sv": "Swedish", "da": "Danish",
    "fi": "Finnish", "pl": "Polish", "cs": "Czech", "fil": "Filipino",
    "tl": "Filipino", "fa": "Persian", "el": "Greek", "ro": "Romanian",
    "hu": "Hungarian", "mk": "Macedonian",
}  # fmt: skip


def code_of(name: str) -> str | None:
    """The code of a language name in any case ("Chinese", "chinese"), or None."""
    low = name.strip().lower()
    for code, known in LANGUAGE_CODES.items():
        if known.lower() == low:
            return code
    return None


def family(tag: str) -> str:
    """The language of a tag without its region: "en" of "en_US" or "en-GB"."""
    return tag.replace("-", "_").split("_")[0].lower()


def as_code(language: str) -> str:
    """A request's language as a declared tag would spell it: the code of a
    name ("English" -> "en"), a code's region after "_" ("en-GB" -> "en_GB"),
    one code for a language of two ("tl" -> "fil"); anything else as it is
    (stripped)."""
    s = language.strip()
    code = code_of(s)
    if code is not None:
        return code
    head, sep, region = s.replace("-", "_").partition("_")
    name = LANGUAGE_CODES.get(head.lower())
    return f"{code_of(name)}{sep}{region}" if name is not None else s


def speaks(languages: Collection[str], language: str) -> bool:
    """``language`` (``en_GB``, ``en``, ``English``) is one of ``languages`` or
    of their families (``en_US`` speaks ``en``, ``en_GB`` and ``English``)."""
    tag = as_code(language)
    families = {family(x) for x in languages}
    return language in languages or tag in languages or family(tag) in families


def described(languages: Sequence[str]) -> str:
    """``one of [codes]`` for a refusal, with the names a request may use
    instead when the codes have any."""
    names = list(
        dict.fromkeys(
            LANGUAGE_CODES[family(x)] for x in languages if family(x) in LANGUAGE_CODES
        )
    )
    listed = f"one of {list(languages)}"
    return f"{listed} (or the name, any case: {names})" if names else listed
