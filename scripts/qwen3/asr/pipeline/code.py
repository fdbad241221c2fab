"""Which sources each build_asr step's output depends on.

Each step's key includes the hash of its own sources only, so a change to the
gates or the engine reruns the gates, not the export (minutes at full size) or
the compiles.  The model directory reader is in every set: it decides what the
model is.  ``ALL`` (the union) keys whole cached builds (pipeline/cache.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from scripts.common.steps import code_hash

ROOT: Final = Path(__file__).resolve().parents[4]
_READ: Final = (
    "scripts/qwen3/asr/pipeline/source.py",
    "scripts/qwen3/pipeline_common/hfdir.py",
)
_MODEL: Final = ("scripts/qwen3/asr/pipeline/context.py", "scripts/qwen3/asr/oracle.py")
#: step -> its sources (relative to the repository)
ROOTS: Final[dict[str, tuple[str, ...]]] = {
    "export": (
        "scripts/qwen3/__init__.py",
        "scripts/qwen3/decoder.py",
        "scripts/qwen3/graph_export.py",
        "scripts/qwen3/asr/encoder.py",
        "scripts/qwen3/asr/export.py",
        "scripts/common/onnx_surgery.py",
        "scripts/gsv/export/graphs.py",  # graph_spec reads the exported I/O
        *_MODEL,
    ),
    # the params (the prompt, ids, schema) feed the gates and the bundle
    "tables": (
        "scripts/qwen3/asr/pipeline/prompt.py",
        "daemon/engines/qwen3asr/params.py",
        *_MODEL,
    ),
    # the gates drive the graphs with the engine's own code
    "gates": (
        "scripts/qwen3/asr/gates.py",
        "scripts/qwen3/asr/pipeline/gating.py",
        "scripts/qwen3/asr/pipeline/prompt.py",
        "scripts/common/parity.py",
        "scripts/gsv/verify/runtime.py",
        "daemon/engines/qwen3asr/params.py",
        "daemon/engines/qwen3asr/decoder.py",
        "daemon/engines/qwen3asr/encoder.py",
        "daemon/engines/qwen3asr/mel.py",
        "daemon/engines/qwen3asr/audio.py",
        "daemon/engine/ar",
        "daemon/engine/graphs.py",
        *_MODEL,
    ),
    "compile": ("scripts/common/qnn_compile.py",),
    "bundle": (
        "scripts/qwen3/asr/pipeline/finish.py",
        "scripts/common/bundling.py",
        "daemon/engine/bundles/manifest.py",
        "daemon/engines/qwen3asr/prompt.py",  # the manifest's language codes
    ),
}
ALL: Final = tuple(sorted({r for roots in ROOTS.values() for r in roots} | set(_READ)))


def hashes() -> dict[str, str]:
    """step -> the hash of its sources (and the reader's)."""
    return {
        step: code_hash(ROOT / rel for rel in (*_READ, *roots))
        for step, roots in ROOTS.items()
    }


def all_hash() -> str:
    return code_hash(ROOT / rel for rel in ALL)
