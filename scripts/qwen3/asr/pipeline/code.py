"""Which sources each build_asr step's output depends on; hashed (and why
per step) by scripts/qwen3/common/step_sources.py."""

from __future__ import annotations

from typing import Final

from scripts.qwen3.common import step_sources
from scripts.qwen3.common.step_sources import ROOT

__all__ = ["ALL", "ROOT", "ROOTS", "all_hash", "hashes"]
#: the model directory reader (in every step's set)
_READ: Final = ("scripts/qwen3/asr/pipeline/source.py", step_sources.HFDIR)
_MODEL: Final = (
    "scripts/qwen3/asr/pipeline/context.py",
    "scripts/qwen3/common/workdir.py",
    "scripts/qwen3/asr/oracle.py",
)
#: step -> its sources (relative to the repository)
ROOTS: Final[dict[str, tuple[str, ...]]] = {
    "export": (
        "scripts/qwen3/__init__.py",
        "scripts/qwen3/common/decoder.py",
        "scripts/common/build/onnx_export.py",
        "scripts/qwen3/asr/encoder.py",
        "scripts/qwen3/asr/export.py",
        "scripts/common/onnx_surgery.py",
        "scripts/gptsovits/export/graphs.py",  # graph_spec reads the exported I/O
        *_MODEL,
    ),
    # the params (the prompt, ids, schema) feed the gates and the bundle
    "tables": (
        "scripts/qwen3/asr/pipeline/prompt.py",
        "daemon/engines/qwen3/asr/params.py",
        *_MODEL,
    ),
    # the gates drive the graphs with the engine's own code
    "gates": (
        "scripts/qwen3/asr/gates.py",
        "scripts/qwen3/asr/pipeline/gating.py",
        "scripts/qwen3/asr/pipeline/prompt.py",
        "scripts/common/parity.py",
        "scripts/common/floor.py",  # the bounds relative to upstream float32's
        "scripts/common/gate_result.py",
        "scripts/gptsovits/verify/runtime.py",
        "daemon/engines/qwen3/asr/params.py",
        "daemon/engines/qwen3/asr/decoder.py",
        "daemon/engines/qwen3/asr/encoder.py",
        "daemon/engines/qwen3/asr/mel.py",
        "daemon/engines/qwen3/asr/audio.py",
        "daemon/sdk/ar",
        "daemon/sdk/graphs.py",
        *_MODEL,
    ),
    "compile": ("scripts/common/qnn_compile.py", "scripts/common/weight_sharing.py"),
    "bundle": (
        "scripts/qwen3/asr/pipeline/finish.py",
        "scripts/qwen3/common/bundle.py",
        "scripts/common/bundling.py",
        "daemon/sdk/bundles/manifest.py",
        "daemon/engines/qwen3/asr/prompt.py",  # the manifest's language codes
    ),
}
ALL: Final = step_sources.union(_READ, ROOTS)


def hashes() -> dict[str, str]:
    """step -> the hash of its sources (and the reader's)."""
    return step_sources.hashes(_READ, ROOTS)


def all_hash() -> str:
    return step_sources.all_hash(ALL)
