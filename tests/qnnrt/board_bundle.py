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
from tests.conftest import _MODELS, build_model
from tests.qnnrt.test_shared import SAME_WEIGHTS_BIN
from tests.qnnrt.tiny_models import SAME, twin_matmuls


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
    return made


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for name, path in build(Path(sys.argv[1])).items():
        print(f"{name}: {path}")
