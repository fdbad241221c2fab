"""Qwen3-ASR-0.6B and Qwen3-TTS-12Hz-0.6B graphs at full width, random weights.

Built by upstream's own classes at the dims of scripts/bench/qwen3/asr/sizes.py and
scripts/bench/qwen3/tts/sizes.py (their docstrings name the sources and what is
ASSUMED), exported by the pipelines' own exporters. The decoder stacks (ASR: 28
text layers, 18 encoder layers; TTS talker: 28 layers) are exported with 1 and
2 layers and their costs extrapolated linearly (cost(N) = c1 + (N-1)(c2-c1)):
the layers are identical, so this is exact for MACs and bytes and avoids
writing ~10 GB of fp32 ONNX. The code predictor (5 layers), the codec decoder
and the speaker encoder (its 4 clip buckets, clone time only) are exported whole.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Final

import torch

from scripts.bench.latency_model.count import GraphCost, cost
from scripts.bench.qwen3.asr import sizes as asr_sizes
from scripts.bench.qwen3.tts import modules
from scripts.bench.qwen3.tts import sizes as tts_sizes

#: layer counts the 1- and 2-layer exports extrapolate to
ASR_TEXT_LAYERS: Final = asr_sizes.Text().layers
ASR_AUDIO_LAYERS: Final = int(asr_sizes.AUDIO_FULL["encoder_layers"])
TALKER_LAYERS: Final = tts_sizes.Dims().talker.layers
#: fp16 K/V as the NPU graphs take (scripts/qwen3/asr/export.py)
KV_DTYPE: Final = torch.float16
#: rows of one text_proj call (scripts/qwen3/tts/pipeline/context.py TEXT_ROWS)
TEXT_ROWS: Final = 32


def _asr(out: Path, layers: int) -> dict[str, Path]:
    from scripts.qwen3.asr import export

    text = asr_sizes.Text()
    names = {
        "encoder": out / f"asr{layers}_encoder.onnx",
        "prefill_512": out / f"asr{layers}_prefill_{text.prefill}.onnx",
        "decode_1024": out / f"asr{layers}_decode_{text.kv_len}.onnx",
    }
    if all(p.is_file() for p in names.values()):
        return names
    audio = {**asr_sizes.AUDIO_FULL, "encoder_layers": layers}
    torch.manual_seed(0)
    model = asr_sizes.model(asr_sizes.config(replace(text, layers=layers), audio))
    export.export_encoder(model, names["encoder"])
    export.export_text(model, "prefill", text.prefill, names["prefill_512"], KV_DTYPE)
    export.export_text(model, "decode", text.kv_len, names["decode_1024"], KV_DTYPE)
    return names


def _talker(out: Path, layers: int, d: tts_sizes.Dims) -> dict[str, Path]:
    from scripts.qwen3.tts.graphs import export

    names = {
        f"talker_prefill_{p}": out / f"talker{layers}_prefill_{p}.onnx"
        for p in d.prefill
    }
    names[f"talker_decode_{d.kv_len}"] = out / f"talker{layers}_decode_{d.kv_len}.onnx"
    if layers == 1:
        names["text_proj"] = out / "text_proj.onnx"
    if all(p.is_file() for p in names.values()):
        return names
    torch.manual_seed(0)
    talker = modules.talker(d, layers).float().eval()
    for n in d.prefill:
        export.export_talker_prefill(talker, n, names[f"talker_prefill_{n}"], KV_DTYPE)
    export.export_talker_decode(
        talker, d.kv_len, names[f"talker_decode_{d.kv_len}"], KV_DTYPE
    )
    if "text_proj" in names:
        export.export_text_proj(talker, TEXT_ROWS, names["text_proj"])
    return names


def _whole(out: Path, d: tts_sizes.Dims, windows: tuple[int, ...]) -> dict[str, Path]:
    from scripts.qwen3.tts.graphs import export
    from scripts.qwen3.tts.graphs.cp_measure import full_width_predictor

    names = {"cp_step": out / "cp_step.onnx"}
    names.update({f"codec_{w}": out / f"codec_{w}.onnx" for w in windows})
    if all(p.is_file() for p in names.values()):
        return names
    export.export_cp_step(full_width_predictor(), names["cp_step"], KV_DTYPE)
    torch.manual_seed(0)
    codec = modules.codec_decoder(d).float().eval()
    for w in windows:
        export.export_codec(codec, w, names[f"codec_{w}"])
    return names


def _speaker(out: Path, d: tts_sizes.Dims) -> dict[str, Path]:
    """speaker_<F> (Base kind, run once per clone): upstream's defaults."""
    from scripts.qwen3.tts.graphs import export

    names = {f"speaker_{f}": out / f"speaker_{f}.onnx" for f in d.xvector_frames}
    missing = [f for f in d.xvector_frames if not names[f"speaker_{f}"].is_file()]
    if missing:
        torch.manual_seed(0)
        model = modules.speaker_encoder(d).float().eval()
        for f in missing:
            export.export_speaker(model, f, names[f"speaker_{f}"])
    return names


Count = Callable[[Path, str], GraphCost]


def asr_costs(out: Path, count: Count = cost) -> dict[str, GraphCost]:
    one, two = _asr(out, 1), _asr(out, 2)
    res = {}
    for key in one:
        layers = ASR_AUDIO_LAYERS if key == "encoder" else ASR_TEXT_LAYERS
        c1, c2 = count(one[key], key), count(two[key], key)
        res[key] = c2.scaled(key, c1, layers - 1)
    return res


def tts_costs(
    out: Path, windows: tuple[int, ...], count: Count = cost
) -> dict[str, GraphCost]:
    d = tts_sizes.Dims()
    one, two = _talker(out, 1, d), _talker(out, 2, d)
    res = {}
    for key, path in one.items():
        c1 = count(path, key)
        res[key] = (
            c1
            if key not in two
            else count(two[key], key).scaled(key, c1, TALKER_LAYERS - 1)
        )
    res.update({k: count(p, k) for k, p in _whole(out, d, windows).items()})
    res.update({k: count(p, k) for k, p in _speaker(out, d).items()})
    return res
