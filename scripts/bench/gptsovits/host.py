"""Host time per T2S decode step of a GPT-SoVITS bundle, excluding the graph.

    python -m scripts.bench.gptsovits.host --bundle DIR

The bundle's T2S decode loop on the CPU backend, host seconds per step
(DecodeStats: step time minus graph time; sampling, embedding, KV bookkeeping).
Target (small next to graph time): <= 0.3 ms per step.  The same loop at full
size on stand-in graphs: scripts/bench/gptsovits/engine.py.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Final

from scripts.bench.timing import budget_line

T2S_STEP_MS: Final = 0.3


def t2s(bundle: Path) -> list[float]:
    """Host ms per T2S decode step of a GPT-SoVITS bundle on the CPU backend."""
    from daemon.sdk.local import open_engine
    from daemon.sdk.tts import SynthesisOptions

    with open_engine(bundle, "cpu", warmup=True) as (engine, _):
        t2s_ = engine.loaded.t2s
        t2s_.stats.reset()
        t2s_.stats.host_steps = []
        for _ in engine.synthesize(
            "今天天气很好。我们去公园散步吧。", SynthesisOptions(seed=1)
        ):
            pass
        return [1e3 * s for s in t2s_.stats.host_steps]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bundle", type=Path, required=True)
    a = p.parse_args(argv)
    budget_line(f"t2s decode step ({a.bundle.name})", t2s(a.bundle), T2S_STEP_MS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
