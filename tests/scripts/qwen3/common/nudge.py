"""A graph taken off upstream after export, for the tests that a build's CPU
gate catches it: the build command's work-dir graph with its largest weight
scaled by NUDGE (the stage's input changes, so the gate reruns)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

#: 1 % off every weight of the largest initializer: far past the gates' 1e-4
#: relative bound, small enough that the graph still runs
NUDGE = np.float32(1.01)


def work_onnx(argv: list[str], name: str) -> Path:
    """The fp32 graph ``name`` in the work dir of the build command ``argv``
    (OUT.work beside --out)."""
    out = argv[argv.index("--out") + 1]
    return Path(out + ".work") / "onnx" / f"{name}.onnx"


def nudge_largest_weight(path: Path) -> None:
    """The ONNX graph at ``path`` rewritten with its largest initializer x NUDGE."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    big = max(model.graph.initializer, key=lambda t: np.prod(t.dims))
    weight = numpy_helper.to_array(big)
    big.CopyFrom(numpy_helper.from_array(weight * NUDGE, big.name))
    onnx.save(model, str(path))
