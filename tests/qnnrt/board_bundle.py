"""Prebuild the tiny test binaries for a board run (the board has no QNN compiler).

usage (on x86, with the simulator wheel):
    python -m tests.qnnrt.board_bundle DIR
then copy DIR to the board and run there:
    HEXVOICE_BOARD_BUNDLE=DIR python -m pytest -m board tests/qnnrt tests/board
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from scripts.common.qnn_compile import compile_onnx
from scripts.common.qnn_shared import compile_shared
from tests.conftest import _MODELS, build_model
from tests.qnnrt.test_shared import (
    BUCKET_BIN,
    BUCKET_ROWS,
    SAME_WEIGHTS_BIN,
    SHARED_BUCKETS_BIN,
)
from tests.qnnrt.tiny_models import SAME, matmul_tanh, twin_matmuls


def build(out: Path) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    made = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in _MODELS:
            onnx = build_model(name, Path(tmp) / f"{name}.onnx")
            compiled = compile_onnx(onnx, Path(tmp) / name, target="qcs8550")
            made[name] = out / f"{name}.bin"
            shutil.copyfile(compiled.bin_path, made[name])
        # Weights shared by two graphs: a board-only artefact (test_shared.py).
        shared = twin_matmuls(Path(tmp) / "same", SAME, name="same", target="qcs8550")
        made["shared_same_weights"] = out / SAME_WEIGHTS_BIN
        shutil.copyfile(shared.bin_path, made["shared_same_weights"])
        # Two static-shape buckets of one model, both layouts (bit-identity test)
        buckets = [matmul_tanh(Path(tmp) / f"b{r}.onnx", rows=r) for r in BUCKET_ROWS]
        both = compile_shared(buckets, Path(tmp), name="buckets", target="qcs8550")
        made["shared_buckets"] = out / SHARED_BUCKETS_BIN
        shutil.copyfile(both.bin_path, made["shared_buckets"])
        for rows, onnx in zip(BUCKET_ROWS, buckets, strict=True):
            one = compile_onnx(onnx, Path(tmp) / f"one{rows}", target="qcs8550")
            made[f"bucket_{rows}"] = out / BUCKET_BIN.format(rows=rows)
            shutil.copyfile(one.bin_path, made[f"bucket_{rows}"])
    return made


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for name, path in build(Path(sys.argv[1])).items():
        print(f"{name}: {path}")
