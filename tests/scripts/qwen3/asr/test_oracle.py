"""The upstream oracle: windowed encoder reference, prompts, greedy, logits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("qwen_asr")

from scripts.qwen3.asr import oracle  # noqa: E402

SR = oracle.SAMPLE_RATE
#: The tiny model's window: n_window_infer 400 mel frames (4 s, 52 tokens).
WINDOW_FRAMES = 400


@pytest.fixture(scope="module")
def upstream(tiny_asr_model: Path) -> tuple[Any, Any]:
    return oracle.load(tiny_asr_model)


def _noise(seconds: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (0.3 * rng.standard_normal(int(seconds * SR))).astype(np.float32)


def test_the_windowed_reference_equals_each_window_run_alone(upstream) -> None:
    model, processor = upstream
    mel, frames = oracle.features(processor, _noise(9.5))
    assert mel.shape == (128, frames) == (128, 950)
    whole = oracle.encode_windowed(model, mel)
    # one window at a time, where no path can look past it
    alone = np.concatenate(
        [
            oracle.encode_sdpa(model, mel[:, i : i + WINDOW_FRAMES])
            for i in range(0, frames, WINDOW_FRAMES)
        ]
    )
    assert whole.shape == alone.shape == (52 + 52 + 20, 64)
    np.testing.assert_allclose(whole, alone, rtol=0, atol=1e-5)


def test_sdpa_agrees_within_one_window_and_differs_beyond(upstream) -> None:
    model, processor = upstream
    mel, _ = oracle.features(processor, _noise(9.5))
    short = mel[:, :350]
    np.testing.assert_allclose(
        oracle.encode_sdpa(model, short),
        oracle.encode_windowed(model, short),
        rtol=0,
        atol=1e-5,
    )
    sdpa, windowed = oracle.encode_sdpa(model, mel), oracle.encode_windowed(model, mel)
    gap = float(np.abs(sdpa - windowed).max())
    top = float(np.abs(windowed).max())
    print(f"\n9.5 s: SDPA vs windowed max|d| {gap:.3g} (absmax {top:.3g})")
    assert gap > 1e-3


def test_prompt_ids_hold_one_audio_pad_per_encoder_row(upstream) -> None:
    model, processor = upstream
    pcm = _noise(2.5)
    batch = oracle.inputs(processor, pcm, context="hello", language="English")
    n_audio = oracle.encode_windowed(model, oracle.features(processor, pcm)[0]).shape[0]
    ids = oracle.prompt_ids(processor, n_audio, context="hello", language="English")
    assert ids == batch["input_ids"][0].tolist()
    pad = model.config.thinker_config.audio_token_id
    assert ids.count(pad) == n_audio == 33  # 2 full chunks (26) + 50 frames (7)
    text = processor.tokenizer.decode(ids)
    assert text.startswith("<|im_start|>system\nhello<|im_end|>\n<|im_start|>user\n")
    assert text.endswith("<|im_start|>assistant\nlanguage English<asr_text>")


def test_greedy_logits_are_the_raw_head_and_teacher_forcing_replays_them(
    upstream,
) -> None:
    model, processor = upstream
    pcm = _noise(2.5, seed=1)
    run = oracle.greedy(model, processor, pcm, max_new_tokens=12)
    assert len(run.ids) == 12 and len(set(run.ids)) > 3
    assert run.logits.shape == (12, len(processor.tokenizer))
    assert (run.logits.argmax(axis=1) == np.array(run.ids)).all()
    forced = oracle.teacher_forced_logits(model, oracle.inputs(processor, pcm), run.ids)
    np.testing.assert_allclose(forced, run.logits, rtol=0, atol=1e-4)


def test_decode_and_parse_are_upstreams(upstream) -> None:
    _, processor = upstream
    tok = processor.tokenizer
    ids = tok.encode("language Chinese<asr_text>你好<|im_end|>")
    assert oracle.decode(tok, ids) == "language Chinese<asr_text>你好"
    assert oracle.parse(oracle.decode(tok, ids)) == ("Chinese", "你好")
    assert oracle.parse("hello there", language="english") == ("English", "hello there")
    assert oracle.eos_ids(processor) == [
        tok.convert_tokens_to_ids("<|im_end|>"),
        tok.convert_tokens_to_ids("<|endoftext|>"),
    ]


#: Imports that must never reach the board runtime (the oracle extra's).
_ORACLE_ONLY = ("qwen_asr", "torch", "transformers")
_BLOCKED_RUN = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ImportError("oracle-only import in the runtime: " + name)
sys.meta_path.insert(0, Block())
import daemon.cli.main
import daemon.engines.qwen3.asr.engine, daemon.engines.qwen3.asr.session
sys.argv = ["hexvoice", "--help"]
import runpy
try:
    runpy.run_module("daemon.cli", run_name="__main__")
except SystemExit as exc:
    sys.exit(exc.code)
"""


def test_the_runtime_and_the_asr_engine_import_without_the_oracle() -> None:
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[4]
    code = _BLOCKED_RUN.format(blocked=_ORACLE_ONLY)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=repo, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "transcribe" in done.stdout
