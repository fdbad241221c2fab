"""Language codes and the English names the Qwen3 models use for them."""

from __future__ import annotations

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
    low = name.lower()
    for code, known in LANGUAGE_CODES.items():
        if known.lower() == low:
            return code
    return None
