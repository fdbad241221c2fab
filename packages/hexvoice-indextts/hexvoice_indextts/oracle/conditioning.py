"""Upstream's speaker conditioning of a clip, ``IndexTTS2.
_get_speaker_conditioning`` (spk_cond_emb, style, prompt_condition, ref_mel:
what a voice is made of), in a fresh interpreter with the tiny model's hub
(oracle/run.py says why), saved as .npz."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Final

import numpy as np

from hexvoice_indextts.oracle.run import hub_env, load

NAMES: Final = ("spk_cond_emb", "style", "prompt_condition", "ref_mel")


def speaker_conditioning(
    model_dir: Path, hf_home: Path, clip: Path, threads: int | None = None
) -> dict[str, np.ndarray]:
    """NAMES -> upstream's arrays for ``clip`` (batch dimension dropped)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cond.npz"
        cmd = [sys.executable, "-m", "hexvoice_indextts.oracle.conditioning"]
        cmd += [str(model_dir), str(clip), str(out)]
        env = {**os.environ, **hub_env(hf_home)}
        if threads is not None:
            env["OMP_NUM_THREADS"] = str(threads)
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(
                f"upstream failed ({done.returncode}):\n{done.stderr[-4000:]}"
            )
        with np.load(out) as saved:
            return {k: saved[k] for k in NAMES}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model_dir", type=Path)
    p.add_argument("clip", type=Path)
    p.add_argument("out", type=Path)
    a = p.parse_args(argv)
    import torch

    tts = load(a.model_dir)
    tts._init_cache()  # type: ignore[attr-defined]
    with torch.no_grad():
        got = tts._get_speaker_conditioning(str(a.clip))  # type: ignore[attr-defined]
    arrays = {k: v[0].detach().numpy() for k, v in zip(NAMES, got, strict=True)}
    with a.out.open("wb") as f:
        np.savez(f, **arrays)
    return 0


if __name__ == "__main__":
    sys.exit(main())
