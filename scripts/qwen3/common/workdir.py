"""The work directory the Qwen3 builds share (build_asr, build_tts_qwen3)::

    onnx/<key>.onnx       fp32 graphs (bundle onnx/: the CPU backend; CPU gates)
    onnx_npu/<key>.onnx   the decoder graphs with float16 K/V (the NPU's)
    stage/cpu, stage/text bundle files other than graphs
    bins/<key>.bin        compiled context binaries

Each build's ``BuildContext`` adds its model, its graph keys and which graphs
have an NPU twin (``npu_onnx``).
"""

from __future__ import annotations

from pathlib import Path


class WorkDir:
    """Paths under one build's work dir, and the buckets its graphs have."""

    def __init__(
        self, work: Path, prefill_buckets: tuple[int, ...], kv_buckets: tuple[int, ...]
    ) -> None:
        self.work = Path(work)
        self.prefill_buckets, self.kv_buckets = prefill_buckets, kv_buckets
        self.onnx_dir = self.work / "onnx"
        self.npu_dir = self.work / "onnx_npu"
        self.stage = self.work / "stage"
        self.bin_dir = self.work / "bins"

    def onnx(self, key: str) -> Path:
        return self.onnx_dir / f"{key}.onnx"

    def bin_path(self, key: str) -> Path:
        return self.bin_dir / f"{key}.bin"
