"""A frame's host work piece by piece, for scripts/bench/qwen3/tts/engine.py.

The engine's own objects and buffers (its talker, code predictor, choosers on
the stand-in's full-size buffers) run each piece alone, warm and with every
cache flushed first.  On x86 the graphs run on the same CPU (the simulator for
seconds per call), which leaves the caches cold for the host work after each
call; a board's NPU does not, but its outputs arrive in DRAM: the warm and
flushed sums bracket the board (as scripts/bench/qwen3/asr/engine.py).  A frame =
the talker pieces once + the predictor pieces 16 times.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import numpy as np

from scripts.bench.timing import FLUSHED_CALLS, PIECE_CALLS, alone, flush_buffer

#: upstream's hard sampling defaults (docs/qwen3.md, TTS generation loop), whatever the
#: bundle says
UPSTREAM_SAMPLING: Final = {
    "do_sample": True, "top_k": 50, "top_p": 1.0, "temperature": 0.9,
    "subtalker_do_sample": True, "subtalker_top_k": 50, "subtalker_top_p": 1.0,
    "subtalker_temperature": 0.9,
}  # fmt: skip


def pieces(
    engine: Any, sampled: bool, calls: int = PIECE_CALLS, flushed: int = FLUSHED_CALLS
) -> list[tuple[str, int, list[float], list[float]]]:
    """(name, calls per frame, warm seconds, flushed seconds) per piece."""
    from daemon.engines.qwen3.tts.frames.sampling import CodeChooser, TalkerChooser
    from daemon.engines.qwen3.tts.options import Request
    from daemon.sdk.tts import SynthesisOptions

    m = engine.model
    p, pred, talker = m.p, m.predictor, m.talker
    g = pred.graph
    bucket = talker.buckets[talker.max_positions]
    tb = bucket.bind()
    pb = g.bind()
    extra = UPSTREAM_SAMPLING if sampled else {"greedy": True}
    voice = next(iter(p.speakers), None)
    request = Request.from_options(SynthesisOptions(speaker=voice, extra=extra), p)
    rng = np.random.default_rng(0)
    choose_code = CodeChooser(request.sampling, p.predictor.vocab, rng)
    choose0 = TalkerChooser(request.sampling, p.talker.vocab, p.tokens.codec_eos, rng)
    n = calls
    codes = rng.integers(0, p.predictor.vocab, n)
    groups = p.predictor.groups
    row = np.zeros(p.talker.hidden, np.float32)
    text = np.zeros(p.talker.hidden, np.float32)
    pos0 = bucket.length // 2
    # logits of a real scale with distinct maxima (the stand-in's are tiny)
    pb["logits"][0] = rng.standard_normal(p.predictor.vocab).astype(np.float32) * 3
    tb["logits"][0, : p.predictor.vocab] = rng.standard_normal(p.predictor.vocab) * 3

    def cp_inputs(i: int) -> None:
        s = i % (groups - 2)
        pred._x[...] = pred.cp_embedding[s, codes[i]]
        pred._head[0] = s
        pred._cos[...], pred._sin[...] = pred.cos[s + 2], pred.sin[s + 2]

    def cp_write(i: int) -> None:
        g.write(i % groups, pb["k_new"], pb["v_new"])

    def cp_row(i: int) -> None:
        row.__iadd__(pred.cp_embedding[i % (groups - 1), codes[i]])

    def talker_inputs(i: int) -> None:
        np.add(np.array(pred.codec_embedding[codes[i]], np.float32), text, out=row)
        tb["x"][0, 0] = row
        tb["cos"][0, 0], tb["sin"][0, 0] = talker.cos[pos0], talker.sin[pos0]

    def talker_write(i: int) -> None:
        bucket.write(pos0, tb["k_new"], tb["v_new"])

    how = "sampled" if sampled else "greedy"
    parts: list[tuple[str, int, Callable[[int], object]]] = [
        ("talker: codec + text row, x, cos/sin", 1, talker_inputs),
        (f"talker: K/V write-back + mask (L={bucket.length})", 1, talker_write),
        (f"talker: processors + {how} code0 ({p.talker.vocab:,})", 1,
         lambda i: choose0(tb["logits"][0])),
        ("predictor: x row (fp16 table), head, cos/sin", groups, cp_inputs),
        (f"predictor: K/V write-back + mask ({groups} rows)", groups, cp_write),
        (f"predictor: {how} code ({p.predictor.vocab:,})", groups - 1,
         lambda i: choose_code(pb["logits"][0], i % (groups - 1))),
        ("predictor: table row into the next input", groups - 1, cp_row),
    ]  # fmt: skip
    flush = flush_buffer()
    out = [(name, k, alone(fn, n), alone(fn, flushed, flush))
           for name, k, fn in parts]  # fmt: skip
    g.start(g.k, g.v, 0)
    return out


def print_pieces(
    rows: list[tuple[str, int, list[float], list[float]]], label: str
) -> None:
    print(f"\nthe frame's host pieces alone ({label}; medians, ms)")
    print(
        f"  {'':<50}{'calls':>6}{'warm':>9}{'flushed':>9}{'x calls':>9}{'fl. x c':>9}"
    )
    warm = flushed = 0.0
    for name, k, w, f in rows:
        mw, mf = float(np.median(w)), float(np.median(f))
        warm, flushed = warm + k * mw, flushed + k * mf
        print(f"  {name:<50}{k:>6}{1e3 * mw:>9.4f}{1e3 * mf:>9.4f}"
              f"{1e3 * k * mw:>9.3f}{1e3 * k * mf:>9.3f}")  # fmt: skip
    print(f"  {'frame (sum)':<50}{'':>6}{'':>9}{'':>9}{1e3 * warm:>9.3f}"
          f"{1e3 * flushed:>9.3f}")  # fmt: skip


SAMPLED: Final = (False, True)
