"""What the Qwen3 engines' per-request ``extra`` readers share.

Both engines read ``extra`` into a frozen ``msgspec.Struct`` (daemon/sdk/
reader.py words the refusals); these are the checks msgspec's constraints do
not express.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from daemon.config.reader import fail, invalid


def check_finite(extra: Any, names: Iterable[str]) -> None:
    """In an ``Extra.__post_init__``: the float fields ``names``, when set, are
    finite (msgspec's ``gt`` / ``ge`` let infinity through)."""
    for name in names:
        value = getattr(extra, name)
        if value is not None and not math.isfinite(value):
            raise invalid(name, "a finite number", value)


def max_new_tokens(engine_id: str, asked: int | None, most: int) -> int:
    """The request's ``max_new_tokens``: ``asked``, at most the bundle's
    ``most`` (ValueError past it); ``most`` when not asked."""
    if asked is None:
        return most
    if asked > most:
        raise fail(engine_id, "max_new_tokens", f"an integer in [1, {most}]",
                   asked, ValueError)  # fmt: skip
    return asked
