"""Content-keyed cache of converted Piper bundles (tests, demo, benchmarks).

A bundle is rebuilt only when something that can change it changed: the voice
bytes, the converter's code, the options, or the onnxruntime / QNN versions.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import asdict
from pathlib import Path

from daemon.sdk.bundles.manifest import sha256_file
from scripts.common.onnx_surgery import ConversionError
from scripts.common.qnn_compile import qnn_sdk_version
from scripts.piper.convert import ConvertOptions, convert, log
from scripts.piper.model_card import card_path

# Bundles kept by cached_convert: enough for the option sets one test run uses.
CACHE_KEEP = 4
# scripts/piper modules whose code shapes a bundle (not the oracle or this cache).
_BUNDLE_MODULES = (
    "convert", "cpu_graphs", "cuts", "graphs", "sdp_export", "htp", "model_card",
)  # fmt: skip


def cache_key(voice: Path, options: ConvertOptions) -> str:
    """Hash of everything that can change the bundle: voice, code, options, QNN."""
    import onnxruntime

    key = hashlib.sha256()
    key.update(sha256_file(Path(voice)).encode())
    key.update(sha256_file(Path(f"{voice}.json")).encode())
    card = card_path(Path(voice))
    if card.is_file():  # the voice's attribution comes from it
        key.update(sha256_file(card).encode())
    for src in sorted(_sources()):
        key.update(src.read_bytes())
    key.update(json.dumps(asdict(options), sort_keys=True).encode())
    key.update(f"{onnxruntime.__version__} {qnn_sdk_version()}".encode())
    return key.hexdigest()[:20]


def cached_convert(
    voice: Path,
    options: ConvertOptions,
    cache_root: Path,
    compile_cache: Path | None = None,
) -> Path:
    """Convert once per (voice bytes, converter source, options); return the bundle.

    The key covers everything that can change the output, so a stale bundle is
    never reused; the bundle is built beside the cache and renamed into place.
    """
    cache_root.mkdir(parents=True, exist_ok=True)
    bundle = cache_root / cache_key(voice, options)
    manifest = bundle / "voice.yaml"
    if not manifest.is_file():
        try:
            convert(Path(voice), bundle, options, compile_cache)
        except (ConversionError, OSError):  # lost a race to a concurrent run?
            if not manifest.is_file():
                raise
    else:
        log(f"cached bundle {bundle}")
    manifest.touch()  # mark as recently used for pruning
    _prune(cache_root, CACHE_KEEP)
    return bundle


def _prune(cache_root: Path, keep: int) -> None:
    """Drop all but the `keep` most recently used bundles (each ~200 MB)."""
    bundles = [
        p
        for p in cache_root.iterdir()
        if not p.is_symlink() and (p / "voice.yaml").is_file()
    ]
    bundles.sort(key=lambda p: (p / "voice.yaml").stat().st_mtime, reverse=True)
    for stale in bundles[keep:]:
        shutil.rmtree(stale, ignore_errors=True)


def _sources() -> list[Path]:
    here = Path(__file__).resolve().parent
    repo = here.parent.parent
    return [
        *(here / f"{m}.py" for m in _BUNDLE_MODULES),
        repo / "scripts/common/qnn_compile.py",
        repo / "scripts/common/onnx_surgery.py",
        repo / "scripts/common/bundling.py",
        repo / "scripts/common/weight_sharing.py",
        # a target's share_weights decides the binaries
        *sorted((repo / "daemon/targets/").glob("*.yaml")),
        repo / "daemon/sdk/bundles/manifest.py",
        repo / "daemon/engines/piper/cpu.py",  # the SDP port checked at conversion
        repo / "daemon/engines/piper/params.py",  # the params schema
        repo / "daemon/sdk/audio/windows.py",
    ]
