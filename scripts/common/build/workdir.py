"""The one work-dir layout every build uses::

    state.json            the stages' keys and results (run.py)
    onnx/<key>.onnx       fp32 graphs (a bundle's onnx/: the CPU backend; CPU gates)
    onnx_npu/<key>.onnx   graphs as compiled for the NPU where they differ
                          (float16 K/V, cut or re-bucketed graphs)
    bins/<key>.bin        compiled context binaries
    stage/                bundle files other than graphs (cpu/, text/, ...)

A build's context adds its model, its graph keys and which graphs have an NPU
twin.
"""

from __future__ import annotations

from pathlib import Path


class WorkDir:
    """Paths under one build's work dir."""

    def __init__(self, work: Path) -> None:
        self.work = Path(work)
        self.onnx_dir = self.work / "onnx"
        self.npu_dir = self.work / "onnx_npu"
        self.bin_dir = self.work / "bins"
        self.stage = self.work / "stage"

    def onnx(self, key: str) -> Path:
        return self.onnx_dir / f"{key}.onnx"

    def npu_onnx_path(self, key: str) -> Path:
        return self.npu_dir / f"{key}.onnx"

    def bin_path(self, key: str) -> Path:
        return self.bin_dir / f"{key}.bin"
