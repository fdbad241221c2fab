"""Which sources each build_tts_qwen3 step's output depends on; hashed (and why
per step) by scripts/qwen3/common/step_sources.py."""

from __future__ import annotations

from typing import Final

from scripts.qwen3.common import step_sources
from scripts.qwen3.common.step_sources import ROOT

__all__ = ["ALL", "ROOT", "ROOTS", "all_hash", "hashes"]
#: the model directory reader (in every step's set)
_READ: Final = ("scripts/qwen3/tts/pipeline/source.py", step_sources.HFDIR)
#: what loads upstream's model (every step that touches it)
_MODEL: Final = (
    "scripts/qwen3/tts/pipeline/context.py",
    "scripts/qwen3/common/workdir.py",
    "scripts/qwen3/tts/pipeline/tables.py",
    "scripts/qwen3/tts/upstream.py",
)
#: step -> its sources (relative to the repository)
ROOTS: Final[dict[str, tuple[str, ...]]] = {
    "windows": (
        "scripts/qwen3/tts/windows.py",
        "scripts/qwen3/tts/codec_plan.py",
        "scripts/common/floor.py",  # the float64 decode
        "scripts/common/receptive_field.py",
        "scripts/common/parity.py",
        "daemon/engines/qwen3/tts/stream.py",  # the schedule measured
        *_MODEL,
    ),
    "export": (
        "scripts/qwen3/__init__.py",
        "scripts/qwen3/common/decoder.py",
        "scripts/common/build/onnx_export.py",
        "scripts/qwen3/tts/graphs/export.py",
        "scripts/qwen3/tts/graphs/talker.py",
        "scripts/qwen3/tts/graphs/predictor.py",
        "scripts/qwen3/tts/graphs/codec.py",
        "scripts/qwen3/tts/graphs/speaker.py",
        "scripts/common/onnx_surgery.py",
        *_MODEL,
    ),
    # the params (the prompt, ids, schema) feed the gates and the bundle
    "tables": (
        "scripts/qwen3/tts/pipeline/prompt.py",
        "scripts/qwen3/tts/graphs/speaker.py",  # reflect_pad
        "daemon/engines/qwen3/tts/params.py",
        *_MODEL,
    ),
    "quant": ("scripts/qwen3/tts/quant.py", "scripts/qwen3/tts/pipeline/quant.py",
              *_MODEL),  # fmt: skip
    "gates": (
        "scripts/qwen3/tts/graphs/gates.py",
        "scripts/qwen3/tts/graphs/codec_sim.py",
        "scripts/qwen3/tts/graphs/codec.py",  # the mask codec_sim leaves out
        "scripts/common/floor.py",
        "scripts/common/gate_result.py",
        "scripts/qwen3/tts/codec_plan.py",
        "scripts/common/receptive_field.py",
        "scripts/qwen3/tts/graphs/speaker_gate.py",
        "daemon/engines/qwen3/tts/xvector.py",  # the speaker graphs' feeds
        "scripts/qwen3/tts/windows.py",
        "daemon/engines/qwen3/tts/stream.py",
        "scripts/qwen3/tts/pipeline/gating.py",
        "scripts/qwen3/tts/pipeline/prompt.py",
        "scripts/qwen3/asr/gates.py",  # GateResult, sim_gate's fp16-ulp rule
        "scripts/common/parity.py",
        "scripts/gptsovits/verify/runtime.py",
        "daemon/engines/qwen3/tts/params.py",
        "daemon/sdk/ar",
        "daemon/sdk/graphs.py",
        *_MODEL,
    ),
    "compile": ("scripts/common/qnn_compile.py", "scripts/common/weight_sharing.py"),
    "bundle": (
        "scripts/qwen3/tts/pipeline/finish.py",
        "scripts/qwen3/common/bundle.py",
        "scripts/common/bundling.py",
        "daemon/sdk/bundles/manifest.py",
        "daemon/engines/qwen3/tts/params.py",
    ),
}
ALL: Final = step_sources.union(_READ, ROOTS)


def hashes() -> dict[str, str]:
    """step -> the hash of its sources (and the reader's)."""
    return step_sources.hashes(_READ, ROOTS)


def all_hash() -> str:
    return step_sources.all_hash(ALL)
