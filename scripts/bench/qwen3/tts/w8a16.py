"""The w8a16 code predictor against the fp16 one on the simulator (the
real-time budget): teacher-forced top-1 and the cp_step bytes of two bundles of one
checkpoint (``build_tts_qwen3 --cp-weights fp16`` and ``w8a16``).

    .venv/bin/python -m scripts.bench.qwen3.tts.w8a16 MODEL_DIR FP16_BUNDLE \
        W8A16_BUNDLE [--speaker NAME] [--frames N]

Upstream's greedy frames of the test texts (scripts/qwen3/tts/oracle.py, CPU
fp32) are forced onto both bundles' engines on the simulator; top-1 of the 15
predictor heads (and of the talker's code0, which both bundles share) against
upstream's raw logits, and w8a16 against fp16.  The predicted board gain is the
bytes a frame streams (scripts/bench/qwen3/tts/engine.py prints it at full size).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np


def _top1(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a.reshape(-1, a.shape[-1]), b.reshape(-1, b.shape[-1])
    return float((a.argmax(1) == b.argmax(1)).mean())


def forced(engine: Any, text: str, language: str, speaker: str | None,
           codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    from daemon.engines.qwen3.tts.options import Request
    from daemon.sdk.tts import SynthesisOptions

    m = engine.model
    options = SynthesisOptions(speaker=speaker, language=language)
    prompt = m.prompt(text, Request.from_options(options, m.p))
    return m.generator.teacher_forced(prompt, codes)


def main(argv: list[str] | None = None) -> int:
    from daemon.sdk.bundles.manifest import Bundle
    from daemon.sdk.local import open_engine
    from scripts.qwen3.tts import oracle, tiny

    parser = argparse.ArgumentParser(prog="python -m scripts.bench.qwen3.tts.w8a16")
    parser.add_argument("model", type=Path)
    parser.add_argument("fp16", type=Path)
    parser.add_argument("w8a16", type=Path)
    parser.add_argument("--speaker", default="ryan")
    parser.add_argument("--frames", type=int, default=12)
    args = parser.parse_args(argv)
    tts = oracle.load(args.model)
    runs = {key: oracle.greedy(tts, text, "auto", args.speaker,
                               max_new_tokens=args.frames)
            for key, text in tiny.TEXTS.items()}  # fmt: skip
    rows = []
    with open_engine(args.fp16, "qnn") as f16, open_engine(args.w8a16, "qnn") as w8:
        for key, want in runs.items():
            got = {name: forced(e.engine, tiny.TEXTS[key], "auto", args.speaker,
                                want.codes)
                   for name, e in (("fp16", f16), ("w8a16", w8))}  # fmt: skip
            rows.append((key, len(want.codes), want, got))
    print("\nteacher-forced top-1 on the simulator (upstream's greedy frames)")
    print(f"{'text':<8}{'frames':>7}{'cp fp16':>10}{'cp w8a16':>10}{'w8 vs 16':>10}"
          f"{'talker 16':>11}{'talker w8':>11}")  # fmt: skip
    tot = {"f": 0.0, "w": 0.0, "x": 0.0, "n": 0}
    for key, n, want, got in rows:
        f, w = got["fp16"][1], got["w8a16"][1]
        pf, pw = _top1(want.predictor_logits, f), _top1(want.predictor_logits, w)
        px = _top1(f, w)
        tf = _top1(want.talker_logits, got["fp16"][0])
        tw = _top1(want.talker_logits, got["w8a16"][0])
        k = n * 15
        tot["f"], tot["w"], tot["x"] = (
            tot["f"] + pf * k,
            tot["w"] + pw * k,
            tot["x"] + px * k,
        )
        tot["n"] += k
        print(f"{key:<8}{n:>7}{pf:>10.4f}{pw:>10.4f}{px:>10.4f}{tf:>11.4f}{tw:>11.4f}")
    n = max(tot["n"], 1)
    print(f"{'all':<8}{'':>7}{tot['f'] / n:>10.4f}{tot['w'] / n:>10.4f}"
          f"{tot['x'] / n:>10.4f}   ({tot['n']} predictor tokens)")  # fmt: skip
    print("\ncp_step binary bytes")
    for name, path in (("fp16", args.fp16), ("w8a16", args.w8a16)):
        spec = Bundle.load(path).graphs["cp_step"]
        size = (path / spec.file).stat().st_size
        print(f"  {name:<8}{size:>14,}  ({spec.file})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
