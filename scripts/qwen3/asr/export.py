"""Export Qwen3-ASR's static graphs from the upstream model, and their I/O.

`model` is upstream's `Qwen3ASRForConditionalGeneration` (fp32, eval). Graphs
(the engine's graph contract, docs/qwen3.md, graph set):

    encoder     mel [C,1,M,100], stem_mask1 [C,1,1,50], stem_mask2 [C,1,1,25],
                key_mask [1,1,1,W] → audio [W,D]
    prefill_P   x [1,P,H], mask [1,1,P,P], cos/sin [1,P,hd], last [1,P]
                → logits [1,V], k/v [Ly,Kh,P,hd]
    decode_L    x [1,1,H], k_cache/v_cache [Ly,Kh,L,hd], mask [1,1,1,L],
                cos/sin [1,1,hd] → logits [1,V], k_new/v_new [Ly,Kh,1,hd]

Every tensor is float32 except the K/V tensors with `kv_dtype=torch.float16`:
the ONNX graphs compiled for the NPU take and give fp16 K/V (as GPT-SoVITS's
T2S, scripts/gptsovits/pipeline/context.py), so the runtime's fp16 caches bind
without conversion; the bundle's CPU graphs keep float32.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from scripts.common.build.onnx_export import export_static
from scripts.qwen3.asr import encoder
from scripts.qwen3.common import decoder
from scripts.qwen3.common.decoder_export import Step, export_step

ENCODER = "encoder"
_DTYPES = {torch.float32: "float32", torch.float16: "float16"}


def prefill_name(length: int) -> str:
    return f"prefill_{length}"


def decode_name(length: int) -> str:
    return f"decode_{length}"


def text_stack(model: nn.Module) -> decoder.Qwen3Stack:
    """The thinker's decoder layers, final norm and LM head, wrapped."""
    thinker = model.thinker
    return decoder.Qwen3Stack(thinker.model.layers, thinker.model.norm, thinker.lm_head)


def export_encoder(model: nn.Module, path: str | Path) -> Path:
    """The one-window audio encoder graph at `path`."""
    window = encoder.EncoderWindow(model.thinker.audio_tower)
    args = encoder.window_args(window.dims)
    export_static(window, args, encoder.INPUTS, encoder.OUTPUTS, path)
    return Path(path)


def export_text(
    model: nn.Module,
    step: Step,
    length: int,
    path: str | Path,
    kv_dtype: torch.dtype = torch.float32,
) -> Path:
    """The text decoder's ``step`` graph at `path`: the prefill over `length`
    prompt positions or the decode step over a `length`-row KV cache."""
    return export_step(text_stack(model), step, length, path, kv_dtype)


@dataclass(frozen=True)
class Tensor:
    name: str
    dtype: str  # numpy dtype name
    shape: tuple[int, ...]


@dataclass(frozen=True)
class GraphIo:
    """A graph's inputs and outputs, in the exported graph's order."""

    name: str
    inputs: tuple[Tensor, ...]
    outputs: tuple[Tensor, ...]


def graph_io(
    config: Any,
    prefill_buckets: tuple[int, ...],
    kv_buckets: tuple[int, ...],
    kv_dtype: torch.dtype = torch.float32,
) -> dict[str, GraphIo]:
    """I/O of every graph for a `Qwen3ASRConfig` (config.json), by graph name,
    without exporting anything (what `graph_spec` reads back from the files)."""
    audio, text = config.thinker_config.audio_config, config.thinker_config.text_config
    c = audio.n_window_infer // encoder.CHUNK_FRAMES
    w = c * encoder.CHUNK_TOKENS
    f32, kv = "float32", _DTYPES[kv_dtype]
    h, v = text.hidden_size, text.vocab_size
    hd = getattr(text, "head_dim", None) or h // text.num_attention_heads
    ly, kh = text.num_hidden_layers, text.num_key_value_heads

    def t(name: str, shape: tuple[int, ...], dtype: str = f32) -> Tensor:
        return Tensor(name, dtype, shape)

    graphs = {
        ENCODER: GraphIo(
            ENCODER,
            (
                t("mel", (c, 1, audio.num_mel_bins, encoder.CHUNK_FRAMES)),
                t("stem_mask1", (c, 1, 1, encoder.STEM1_FRAMES)),
                t("stem_mask2", (c, 1, 1, encoder.STEM2_FRAMES)),
                t("key_mask", (1, 1, 1, w)),
            ),
            (t("audio", (w, audio.output_dim)),),
        )
    }
    for p in prefill_buckets:
        graphs[prefill_name(p)] = GraphIo(
            prefill_name(p),
            (
                t("x", (1, p, h)),
                t("mask", (1, 1, p, p)),
                t("cos", (1, p, hd)),
                t("sin", (1, p, hd)),
                t("last", (1, p)),
            ),
            (
                t("logits", (1, v)),
                t("k", (ly, kh, p, hd), kv),
                t("v", (ly, kh, p, hd), kv),
            ),
        )
    for n in kv_buckets:
        cache = (ly, kh, n, hd)
        graphs[decode_name(n)] = GraphIo(
            decode_name(n),
            (
                t("x", (1, 1, h)),
                t("k_cache", cache, kv),
                t("v_cache", cache, kv),
                t("mask", (1, 1, 1, n)),
                t("cos", (1, 1, hd)),
                t("sin", (1, 1, hd)),
            ),
            (
                t("logits", (1, v)),
                t("k_new", (ly, kh, 1, hd), kv),
                t("v_new", (ly, kh, 1, hd), kv),
            ),
        )
    return graphs
