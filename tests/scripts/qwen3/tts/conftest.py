"""Session fixtures of the export tests: the tiny Qwen3-TTS checkpoints loaded
with upstream's own loader (from the `tiny_tts_custom` / `tiny_tts_base`
directories), and their graphs exported once."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

#: small buckets: a 12-row prompt and a few forced steps fit
PREFILL = 16
KV = 32
#: text_proj rows
TEXT_ROWS = 8
#: codec windows at two lengths (the sliding window itself is tested on the
#: torch module with a short window: exporting 80 frames costs ~15 s)
CODEC_FRAMES = (6, 16)
#: speaker encoder mel frames (two buckets)
SPEAKER_FRAMES = (40, 63)


def _load(path: Path) -> Any:
    import torch

    from scripts.qwen3.tts.upstream import import_qwen_tts

    tts = import_qwen_tts().Qwen3TTSModel.from_pretrained(
        str(path), device_map="cpu", dtype=torch.float32
    )
    return tts.model.eval()


@pytest.fixture(scope="session")
def tts_custom(tiny_tts_custom: Path) -> Any:
    """Upstream's Qwen3TTSForConditionalGeneration (custom_voice, fp32)."""
    return _load(tiny_tts_custom)


@pytest.fixture(scope="session")
def tts_base(tiny_tts_base: Path) -> Any:
    """Upstream's Qwen3TTSForConditionalGeneration (base: speaker encoder, and a
    code predictor narrower than the talker)."""
    return _load(tiny_tts_base)


@pytest.fixture(scope="session")
def tts_codec(tts_base: Any) -> Any:
    """The 12 Hz Qwen3TTSTokenizerV2Model of the base checkpoint."""
    return tts_base.speech_tokenizer.model.eval()


@dataclass(frozen=True)
class TalkerGraphs:
    """fp32 graphs (the CPU backend's) and fp16-K/V ones (compiled for the NPU)."""

    text_proj: Path
    prefill: Path
    decode: Path
    prefill_npu: Path
    decode_npu: Path


@pytest.fixture(scope="session")
def onnx_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("qwen3_tts_onnx")


@pytest.fixture(scope="session")
def talker_graphs(tts_custom: Any, onnx_dir: Path) -> TalkerGraphs:
    import torch

    from scripts.qwen3.tts.graphs import export

    d, m, f16 = onnx_dir, tts_custom, torch.float16
    return TalkerGraphs(
        text_proj=export.export_text_proj(m, TEXT_ROWS, d / "text_proj.onnx"),
        prefill=export.export_talker_prefill(m, PREFILL, d / "prefill.onnx"),
        decode=export.export_talker_decode(m, KV, d / "decode.onnx"),
        prefill_npu=export.export_talker_prefill(m, PREFILL, d / "p16.onnx", f16),
        decode_npu=export.export_talker_decode(m, KV, d / "d16.onnx", f16),
    )


@pytest.fixture(scope="session")
def cp_graphs(tts_custom: Any, tts_base: Any, onnx_dir: Path) -> dict[str, Path]:
    """cp_step of both kinds: custom_voice (projection Identity), base (Linear)."""
    from scripts.qwen3.tts.graphs import export

    return {
        "custom": export.export_cp_step(tts_custom, onnx_dir / "cp_custom.onnx"),
        "base": export.export_cp_step(tts_base, onnx_dir / "cp_base.onnx"),
    }


@pytest.fixture(scope="session")
def codec_graphs(tts_codec: Any, onnx_dir: Path) -> dict[int, Path]:
    from scripts.qwen3.tts.graphs import export

    return {
        t: export.export_codec(tts_codec, t, onnx_dir / f"codec_{t}.onnx")
        for t in CODEC_FRAMES
    }


@pytest.fixture(scope="session")
def speaker_graphs(tts_base: Any, onnx_dir: Path) -> dict[int, Path]:
    from scripts.qwen3.tts.graphs import export

    return {
        f: export.export_speaker(tts_base, f, onnx_dir / f"speaker_{f}.onnx")
        for f in SPEAKER_FRAMES
    }
