"""Board latency model (ESTIMATE): per-graph QCS8550 latency from MACs and bytes.

A roofline fitted to the reference port's measured per-graph timings
(scripts/bench/board/: count.py counts an ONNX graph, fit.py and calibrate.py
fit and pick the model, engines.py/schedule.py price every engine we ship).

    python -m scripts.bench.board_model [--work DIR] [--engines piper,...]

For other benchmarks:

    from scripts.bench.board_model import estimate, board_model
    est = estimate("t2s_decode_L768.onnx")          # Estimate: .seconds, .cost
    est = estimate(path, kv_len=384)                 # priced at another KV bucket

Everything it prints is an estimate: the fit's own leave-one-out error is
printed with it.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

import onnx

from scripts.bench.board import report
from scripts.bench.board.calibrate import board_model
from scripts.bench.board.count import GraphCost, graph_cost, load
from scripts.bench.board.fit import BoardModel

__all__ = ["Estimate", "board_model", "estimate", "predict"]

DEFAULT_WORK = Path("/tmp/hexvoice-board-model")


@dataclass(frozen=True)
class Estimate:
    """Estimated board latency of one call (not a measurement)."""

    graph: str
    seconds: float
    cost: GraphCost
    model: str  # the fitted model's label

    @property
    def ms(self) -> float:
        return self.seconds * 1e3


def _kv_mask(model: onnx.ModelProto) -> tuple[int, int]:
    """(KV length, bytes) of the decode graph's additive ``mask`` input."""
    for v in model.graph.input:
        if v.name == "mask":
            dims = [d.dim_value for d in v.type.tensor_type.shape.dim]
            itemsize = onnx.helper.tensor_dtype_to_np_dtype(
                v.type.tensor_type.elem_type
            ).itemsize
            return dims[-1], math.prod(dims) * itemsize
    raise ValueError("kv_len: the graph has no 'mask' input giving its KV length")


def at_kv_len(
    c: GraphCost, graph_len: int, kv_len: int, mask_bytes: int = 0
) -> GraphCost:
    """``c`` priced at ``kv_len`` cache rows: KV reads, the mask and attention
    MACs scale with the rows (exact for a decode step; the rest is unchanged)."""
    if c.kv_bytes == 0:
        raise ValueError(f"{c.name}: kv_len given but the graph has no KV-cache input")
    if kv_len <= 0:
        raise ValueError(f"kv_len must be positive, got {kv_len}")
    f = kv_len / graph_len
    kv = round(c.kv_bytes * f)
    attn = round(c.attention_macs * f)
    mask = round(mask_bytes * f)
    return dataclasses.replace(
        c,
        kv_bytes=kv,
        input_bytes=c.input_bytes - c.kv_bytes - mask_bytes + kv + mask,
        attention_macs=attn,
        macs=c.macs - c.attention_macs + attn,
    )


def estimate(
    onnx_path: str | Path, kv_len: int | None = None, model: BoardModel | None = None
) -> Estimate:
    """Estimated QCS8550 latency of one call of the graph at ``onnx_path``
    (the profiled-timings model unless ``model``)."""
    path = Path(onnx_path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such ONNX file")
    proto = load(path)
    c = graph_cost(proto, path.stem)
    if kv_len is not None:
        length, mask_bytes = _kv_mask(proto)
        c = at_kv_len(c, length, kv_len, mask_bytes)
    m = model or board_model("profiled")
    return Estimate(c.name, m.seconds(c.features()), c, m.label)


predict = estimate  # the name the team brief uses


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--work",
        type=Path,
        default=DEFAULT_WORK,
        help="where full-size graphs are exported and counted (cached)",
    )
    ap.add_argument(
        "--engines",
        default="piper,gpt-sovits,qwen3-asr,qwen3-tts",
        help="comma-separated engines to predict (default: all)",
    )
    ap.add_argument(
        "--recount",
        action="store_true",
        help="recount the port graphs from the GSV export, compare",
    )
    ap.add_argument("--out", type=Path, help="also write the report here (markdown)")
    args = ap.parse_args(argv)
    names = [n for n in args.engines.split(",") if n]
    text = report.full_report(args.work, names, args.recount)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
