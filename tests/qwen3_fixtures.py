"""Qwen3-ASR test fixtures (a pytest plugin, listed in tests/conftest.py).

``tiny_asr_model``: the tiny random checkpoint of scripts/qwen3/asr/tiny.py,
written once per content key under the ``qnn_cache`` directory, so later runs
(and the other engineers' sessions sharing the cache) reuse it.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
from importlib import metadata
from pathlib import Path
from typing import Final

import pytest

#: The seed of the suite's tiny checkpoint.
TINY_SEED: Final = 0
#: What the written bytes depend on besides tiny.py itself.
_KEY_PACKAGES: Final = (
    "qwen-asr",
    "transformers",
    "tokenizers",
    "torch",
    "safetensors",
)


def tiny_model_key(seed: int = TINY_SEED) -> str:
    """Content key of the tiny checkpoint: its writer's source, seed, versions."""
    from scripts.qwen3.asr import tiny

    h = hashlib.sha256(Path(tiny.__file__).read_bytes())
    h.update(f"seed={seed}".encode())
    for name in _KEY_PACKAGES:
        h.update(f"|{name}={metadata.version(name)}".encode())
    return h.hexdigest()[:16]


def cached_tiny_model(root: Path, seed: int = TINY_SEED) -> Path:
    """``root/qwen3-asr-tiny/<key>``, written by write_tiny_model when missing.

    Written into a sibling and renamed under a lock: concurrent sessions share
    the cache and must never see a half-written directory."""
    from scripts.qwen3.asr.tiny import write_tiny_model

    base = root / "qwen3-asr-tiny"
    base.mkdir(parents=True, exist_ok=True)
    out = base / tiny_model_key(seed)
    with open(base / "lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not (out / "config.json").is_file():
                part = base / f"{out.name}.part"
                shutil.rmtree(part, ignore_errors=True)
                shutil.rmtree(out, ignore_errors=True)
                write_tiny_model(part, seed)
                part.rename(out)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return out


@pytest.fixture(scope="session")
def tiny_asr_model(qnn_cache: Path) -> Path:
    """The tiny Qwen3-ASR checkpoint directory (Qwen3-ASR-0.6B layout)."""
    pytest.importorskip("torch")
    pytest.importorskip("qwen_asr")
    return cached_tiny_model(qnn_cache)
