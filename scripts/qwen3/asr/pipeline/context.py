"""What every stage of the ASR build reads: the checked model directory, the
upstream model (loaded lazily: a fully resumed run loads none), the graphs'
keys and paths in the work dir (scripts/common/build/workdir.py)::

    onnx/<key>.onnx       fp32 graphs (bundle onnx/: the CPU backend; CPU gates)
    onnx_npu/<key>.onnx   prefill/decode with float16 K/V (compiled for the NPU)
    stage/cpu, stage/text bundle files other than graphs
    bins/<key>.bin        compiled context binaries
"""

from __future__ import annotations

import logging
from functools import cached_property
from pathlib import Path
from typing import Any

from daemon.engines.qwen3.asr import params as layout
from scripts.common.build.run import hash_path
from scripts.qwen3.asr.pipeline.source import ModelDir
from scripts.qwen3.common.context import Qwen3Context, Qwen3Options

_LOGGER = logging.getLogger(__name__)


class BuildContext(Qwen3Context):
    def __init__(self, opts: Qwen3Options, src: ModelDir) -> None:
        super().__init__(opts, src.root.name)
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

    @cached_property
    def model_files(self) -> dict[str, str]:
        """Every model file's sha256 by name (the stages reading the model are
        keyed by it; hashed once per run: at full size they are GBs)."""
        _LOGGER.info("hashing %d model files in %s", len(self.src.files), self.src.root)
        return {p.name: hash_path(p) for p in self.src.files}

    @property
    def shape(self) -> dict[str, Any]:
        """What the model's stages read besides the model: its buckets."""
        return {"prefill": list(self.prefill_buckets), "kv": list(self.kv_buckets)}

    # paths -------------------------------------------------------------------
    def graph_keys(self) -> list[str]:
        return [
            layout.ENCODER,
            *(layout.prefill_key(p) for p in self.prefill_buckets),
            *(layout.decode_key(n) for n in self.kv_buckets),
        ]

    def npu_onnx(self, key: str) -> Path:
        """The graph compiled for the NPU: float16 K/V for the decoder graphs."""
        return self.onnx(key) if key == layout.ENCODER else self.npu_onnx_path(key)

    def export_outputs(self) -> list[Path]:
        keys = self.graph_keys()
        return [self.onnx(k) for k in keys] + [self.npu_onnx(k) for k in keys[1:]]

    def table_outputs(self) -> list[Path]:
        return [self.stage / layout.EMBED_TOKENS, self.stage / layout.TOKENIZER]
