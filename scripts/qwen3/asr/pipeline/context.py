"""The work of each build_asr step, over one checked model directory.

The upstream model loads lazily (a fully resumed run loads none).  Work-dir
layout (scripts/qwen3/common/workdir.py)::

    onnx/<key>.onnx       fp32 graphs (bundle onnx/: the CPU backend; CPU gates)
    onnx_npu/<key>.onnx   prefill/decode with float16 K/V (compiled for the NPU)
    stage/cpu, stage/text bundle files other than graphs
    bins/<key>.bin        compiled context binaries
"""

from __future__ import annotations

import inspect
import logging
from functools import cached_property
from pathlib import Path
from typing import Any, Final

import numpy as np
import torch

from daemon.engines.qwen3.asr import params as layout
from scripts.qwen3.asr import encoder, export
from scripts.qwen3.asr.pipeline import prompt
from scripts.qwen3.asr.pipeline.source import GENERATION, SAMPLE_RATE, ModelDir
from scripts.qwen3.common.workdir import WorkDir

_LOGGER = logging.getLogger(__name__)

#: The CPU keeps embed_tokens; at full size (151,936 x 1024) float16 halves its
#: 622 MB (docs/qwen3.md, CPU side).  A table this small or smaller stays float32, so a
#: tiny test checkpoint runs the CPU backend bit-exact against upstream's fp32.
EMBED_FP32_MAX_BYTES: Final = 64 << 20
#: additive mask value of the graphs (hexvoice's shapes.MASK_VALUE, docs/qwen3.md, CPU
#: side)
MASK_VALUE: Final = -100.0


def upstream_max_new_tokens() -> int:
    """Upstream's default generation budget (Qwen3ASRModel.from_pretrained)."""
    from qwen_asr import Qwen3ASRModel

    sig = inspect.signature(Qwen3ASRModel.from_pretrained)
    return int(sig.parameters["max_new_tokens"].default)


class BuildContext(WorkDir):
    def __init__(
        self,
        src: ModelDir,
        work: Path,
        prefill_buckets: tuple[int, ...],
        kv_buckets: tuple[int, ...],
    ) -> None:
        super().__init__(work, prefill_buckets, kv_buckets)
        self.src = src

    # model -------------------------------------------------------------------
    @cached_property
    def asr(self) -> Any:
        """Upstream's ``Qwen3ASRModel`` over the oracle's model and processor
        (fp32, eval, CPU): its prompt builders are the reference."""
        from qwen_asr import Qwen3ASRModel

        from scripts.qwen3.asr import oracle

        model, processor = oracle.load(self.src.root)
        model.requires_grad_(False)
        return Qwen3ASRModel(backend="transformers", model=model, processor=processor)

    @property
    def model(self) -> Any:
        return self.asr.model

    # paths -------------------------------------------------------------------
    def graph_keys(self) -> list[str]:
        return [
            layout.ENCODER,
            *(layout.prefill_key(p) for p in self.prefill_buckets),
            *(layout.decode_key(n) for n in self.kv_buckets),
        ]

    def npu_onnx(self, key: str) -> Path:
        """The graph compiled for the NPU: float16 K/V for the decoder graphs."""
        return self.onnx(key) if key == layout.ENCODER else self.npu_dir / f"{key}.onnx"

    def export_outputs(self) -> list[Path]:
        keys = self.graph_keys()
        return [self.onnx(k) for k in keys] + [self.npu_onnx(k) for k in keys[1:]]

    def table_outputs(self) -> list[Path]:
        return [self.stage / layout.EMBED_TOKENS, self.stage / layout.TOKENIZER]

    # steps -------------------------------------------------------------------
    def export(self) -> dict:
        """Every graph as fp32 ONNX, and the decoder graphs again with fp16 K/V."""
        export.export_encoder(self.model, self.onnx(layout.ENCODER))
        for p in self.prefill_buckets:
            key = layout.prefill_key(p)
            export.export_prefill(self.model, p, self.onnx(key))
            export.export_prefill(self.model, p, self.npu_onnx(key), torch.float16)
        for n in self.kv_buckets:
            key = layout.decode_key(n)
            export.export_decode(self.model, n, self.onnx(key))
            export.export_decode(self.model, n, self.npu_onnx(key), torch.float16)
        return {k: self.onnx(k).stat().st_size for k in self.graph_keys()}

    def write_tables(self) -> dict:
        """cpu/embed_tokens.npy and text/tokenizer.json (the tokenizer upstream
        runs: the fast tokenizer as loaded, added tokens included); the params,
        which need the loaded processor, are this step's result."""
        weight = self.model.thinker.model.embed_tokens.weight.detach().float().numpy()
        dtype = np.float32 if weight.nbytes <= EMBED_FP32_MAX_BYTES else np.float16
        table = self.stage / layout.EMBED_TOKENS
        table.parent.mkdir(parents=True, exist_ok=True)
        np.save(table, weight.astype(dtype))
        tok = self.stage / layout.TOKENIZER
        tok.parent.mkdir(parents=True, exist_ok=True)
        self.asr.processor.tokenizer.backend_tokenizer.save(str(tok))
        if self.src.generation.do_sample:
            _LOGGER.warning(
                "%s says do_sample: upstream's transformers path would sample; the "
                "engine decodes greedily unless a request asks for sampling (as "
                "upstream's vLLM backend, temperature 0)",
                GENERATION,
            )
        return {
            "embed_dtype": np.dtype(dtype).name,
            "embed_shape": list(weight.shape),
            "params": self.params(),
            "do_sample": self.src.generation.do_sample,
        }

    def params(self) -> dict[str, Any]:
        """``voice.yaml`` params, checked by the engine's own schema."""
        text, audio, fe = self.src.text, self.src.audio, self.src.features
        rotary = self.model.thinker.model.rotary_emb
        raw = {
            "hidden": text.hidden_size,
            "head_dim": text.head_dim,
            "layers": text.num_hidden_layers,
            "kv_heads": text.num_key_value_heads,
            "vocab": text.vocab_size,
            "rope_theta": float(text.rope_theta),
            "rope_scaling_factor": float(rotary.attention_scaling),
            "mel": {
                "n_mels": fe.feature_size,
                "n_fft": fe.n_fft,
                "hop_length": fe.hop_length,
                "sampling_rate": SAMPLE_RATE,
                "chunk_frames": encoder.CHUNK_FRAMES,
                "chunk_tokens": encoder.CHUNK_TOKENS,
                "window_chunks": audio.window_chunks,
            },
            "prefill_buckets": list(self.prefill_buckets),
            "kv_buckets": list(self.kv_buckets),
            "tokens": prompt.token_ids(self.asr.processor, self.src.config),
            "prompt": prompt.render_prompt(self.asr),
            "languages": prompt.languages(),
            "max_new_tokens": upstream_max_new_tokens(),
            "mask_value": MASK_VALUE,
        }
        return layout.AsrParams.from_mapping(raw, where="params: ").to_dict()
