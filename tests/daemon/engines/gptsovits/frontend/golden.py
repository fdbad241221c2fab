"""Loader for the golden files in ``data/`` (made from upstream, see their notes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"


def load_golden(name: str) -> dict[str, Any]:
    with open(DATA / name, encoding="utf-8") as f:
        return json.load(f)
