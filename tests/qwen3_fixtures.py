"""Qwen3-ASR and Qwen3-TTS test fixtures (a pytest plugin, listed in tests/conftest.py).

``tiny_asr_model``: the tiny random checkpoint of scripts/qwen3/asr/tiny.py
(``tiny_asr_eos_model``: the same of ``EOS_SEED``, whose greedy runs stop;
``tiny_asr_odd_model``: the writer's ODD shape, of ``ODD_SEED``);
``tiny_tts_custom`` / ``tiny_tts_base``: those of scripts/qwen3/tts/tiny.py. Each
is written once per content key under the ``qnn_cache`` directory, so later runs
(and the other engineers' sessions sharing the cache) reuse it.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import shutil
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Final

import pytest

if TYPE_CHECKING:
    from scripts.qwen3.asr.tiny import Shape

#: The seed of the suite's tiny checkpoint.
TINY_SEED: Final = 0
#: A checkpoint seed whose greedy runs stop by themselves after 8-60 tokens
#: on many clips (seed 0's never emit EOS: scripts/qwen3/asr/tiny.py).
EOS_SEED: Final = 1
#: The seed of the ODD-shaped checkpoint (a third draw: the project's tiny
#: models come from several seeds); its greedy runs pick padded rows.
ODD_SEED: Final = 2
#: What the written bytes depend on besides tiny.py and the code it imports.
_KEY_PACKAGES: Final = (
    "qwen-asr",
    "transformers",
    "tokenizers",
    "torch",
    "safetensors",
)


def tiny_model_key(seed: int = TINY_SEED, shape: Shape | None = None) -> str:
    """Content key of the tiny checkpoint: its writer's code (tiny.py and what
    it imports, as a build stage's key: the BPE trainer), seed, shape (by
    name: the source holds its values), versions."""
    from scripts.common.build.code import code_key
    from scripts.qwen3.asr import tiny

    h = hashlib.sha256(code_key([tiny.__name__]).encode())
    h.update(f"seed={seed}|shape={(shape or tiny.TINY).name}".encode())
    for name in _KEY_PACKAGES:
        h.update(f"|{name}={metadata.version(name)}".encode())
    return h.hexdigest()[:16]


def cached_tiny_model(
    root: Path, seed: int = TINY_SEED, shape: Shape | None = None
) -> Path:
    """``root/qwen3-asr-tiny/<key>``, written by write_tiny_model when missing.

    Written into a sibling and renamed under a lock: concurrent sessions share
    the cache and must never see a half-written directory."""
    from scripts.qwen3.asr.tiny import TINY, write_tiny_model

    base = root / "qwen3-asr-tiny"
    base.mkdir(parents=True, exist_ok=True)
    out = base / tiny_model_key(seed, shape)
    with open(base / "lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not (out / "config.json").is_file():
                part = base / f"{out.name}.part"
                shutil.rmtree(part, ignore_errors=True)
                shutil.rmtree(out, ignore_errors=True)
                write_tiny_model(part, seed, shape or TINY)
                part.rename(out)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return out


#: What the TTS checkpoints' bytes depend on besides their writer's code.
_TTS_KEY_PACKAGES: Final = (
    "qwen-tts",
    "transformers",
    "tokenizers",
    "torch",
    "safetensors",
)


def tiny_tts_key(kind: str, seed: int = TINY_SEED) -> str:
    """Content key of a tiny TTS checkpoint: its writer's code (tiny.py and
    what it imports, as a build stage's key: the codec, the init, the
    tokenizer and the BPE trainer), kind, seed, versions."""
    from scripts.common.build.code import code_key
    from scripts.qwen3.tts import tiny

    h = hashlib.sha256(f"kind={kind}|seed={seed}".encode())
    h.update(code_key([tiny.__name__]).encode())
    for name in _TTS_KEY_PACKAGES:
        h.update(f"|{name}={metadata.version(name)}".encode())
    return h.hexdigest()[:16]


def require_qwen_tts() -> None:
    """Skip unless torch and qwen-tts are installed. Not importorskip("qwen_tts"):
    a bare import needs torchaudio; scripts/qwen3/tts/upstream.py imports it."""
    pytest.importorskip("torch")
    if importlib.util.find_spec("qwen_tts") is None:
        pytest.skip("qwen-tts is not installed (scripts/_venv.sh installs it)")


def cached_tiny_tts(root: Path, kind: str, seed: int = TINY_SEED) -> Path:
    """``root/qwen3-tts-tiny/<kind>-<key>``, written by write_tiny_tts when missing
    (into a sibling, renamed under a lock, as cached_tiny_model)."""
    from scripts.qwen3.tts.tiny import write_tiny_tts

    base = root / "qwen3-tts-tiny"
    base.mkdir(parents=True, exist_ok=True)
    out = base / f"{kind}-{tiny_tts_key(kind, seed)}"
    with open(base / "lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not (out / "speech_tokenizer" / "config.json").is_file():
                part = base / f"{out.name}.part"
                shutil.rmtree(part, ignore_errors=True)
                shutil.rmtree(out, ignore_errors=True)
                write_tiny_tts(part, kind, seed)
                part.rename(out)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return out


@pytest.fixture(scope="session")
def tiny_tts_custom(qnn_cache: Path) -> Path:
    """The tiny Qwen3-TTS CustomVoice dir (Qwen3-TTS-12Hz-0.6B-CustomVoice layout)."""
    require_qwen_tts()
    return cached_tiny_tts(qnn_cache, "custom_voice")


@pytest.fixture(scope="session")
def tiny_tts_base(qnn_cache: Path) -> Path:
    """The tiny Qwen3-TTS Base directory (Qwen3-TTS-12Hz-0.6B-Base layout)."""
    require_qwen_tts()
    return cached_tiny_tts(qnn_cache, "base")


@pytest.fixture(scope="session")
def tiny_asr_model(qnn_cache: Path) -> Path:
    """The tiny Qwen3-ASR checkpoint directory (Qwen3-ASR-0.6B layout)."""
    pytest.importorskip("torch")
    pytest.importorskip("qwen_asr")
    return cached_tiny_model(qnn_cache)


@pytest.fixture(scope="session")
def tiny_asr_eos_model(qnn_cache: Path) -> Path:
    """The tiny Qwen3-ASR checkpoint of ``EOS_SEED`` (same layout and dims)."""
    pytest.importorskip("torch")
    pytest.importorskip("qwen_asr")
    return cached_tiny_model(qnn_cache, seed=EOS_SEED)


@pytest.fixture(scope="session")
def tiny_asr_odd_model(qnn_cache: Path) -> Path:
    """The tiny Qwen3-ASR checkpoint of the writer's ODD shape, ``ODD_SEED``."""
    pytest.importorskip("torch")
    pytest.importorskip("qwen_asr")
    from scripts.qwen3.asr.tiny import ODD

    return cached_tiny_model(qnn_cache, seed=ODD_SEED, shape=ODD)
