"""The work of each build_tts_qwen3 step, over one checked model directory.

Upstream's model loads lazily (a fully resumed run loads none).  Work-dir
layout (shared: scripts/qwen3/common/workdir.py, plus gate_onnx/ and
model/)::

    onnx/<key>.onnx       fp32 graphs (bundle onnx/: the CPU backend; CPU gates)
    onnx_npu/<key>.onnx   talker/predictor graphs with float16 K/V (the NPU's)
    gate_onnx/codec_325   upstream's 300 + 25 chunking, for the codec CPU gate
    stage/cpu, stage/text bundle files other than graphs
    model/                links to MODEL_DIR with speech_tokenizer -> --codec DIR
                          (only when the codec is elsewhere: upstream loads from it)
    bins/<key>.bin        compiled context binaries
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any, Final

import torch

from daemon.engines.qwen3.tts import params as layout
from scripts.qwen3.common.workdir import WorkDir
from scripts.qwen3.tts.pipeline import tables
from scripts.qwen3.tts.pipeline.source import ModelDir
from scripts.qwen3.tts.pipeline.tables import TEXT_ROWS

#: x-vector mel hop (upstream extract_speaker_embedding; reflect pad 384 both
#: sides, no centre: a clip of n samples has 1 + (n - 256) // 256 frames)
XVECTOR_HOP: Final = 256
XVECTOR_PAD: Final = 384
XVECTOR_FFT: Final = 1024


def xvector_frames(seconds: float, sample_rate: int) -> int:
    """Mel frames of a ``seconds`` clip (upstream mel_spectrogram)."""
    n = int(round(seconds * sample_rate))
    return 1 + (n + 2 * XVECTOR_PAD - XVECTOR_FFT) // XVECTOR_HOP


class BuildContext(WorkDir):
    def __init__(
        self,
        src: ModelDir,
        work: Path,
        prefill_buckets: tuple[int, ...],
        kv_buckets: tuple[int, ...],
        codec_frames: tuple[int, ...],
        xvector_buckets: tuple[int, ...] = (),
    ) -> None:
        super().__init__(work, prefill_buckets, kv_buckets)
        self.src = src
        self.codec_frames = tuple(sorted(set(codec_frames)))
        self.xvector_buckets = xvector_buckets if src.kind == "base" else ()
        self.gate_dir = self.work / "gate_onnx"

    # model -------------------------------------------------------------------
    @cached_property
    def tts(self) -> Any:
        """Upstream's ``Qwen3TTSModel`` (fp32, eval, CPU) with the codec of
        ``src.codec_root`` (tables.load_upstream)."""
        return tables.load_upstream(self.src, self.work)

    @property
    def model(self) -> Any:
        """Qwen3TTSForConditionalGeneration."""
        return self.tts.model

    @property
    def codec(self) -> Any:
        """The 12 Hz codec (upstream's Qwen3TTSTokenizer)."""
        return self.tts.model.speech_tokenizer

    # paths -------------------------------------------------------------------
    def decoder_keys(self) -> list[str]:
        """The graphs with K/V caches (a float16-K/V twin for the NPU)."""
        return [
            *(layout.talker_prefill_key(p) for p in self.prefill_buckets),
            *(layout.talker_decode_key(n) for n in self.kv_buckets),
            layout.CP_STEP,
        ]

    def graph_keys(self) -> list[str]:
        return [
            layout.TEXT_PROJ,
            *self.decoder_keys(),
            *(layout.codec_key(t) for t in self.codec_frames),
            *(layout.speaker_key(f) for f in self.xvector_buckets),
        ]

    def npu_onnx(self, key: str) -> Path:
        """The graph compiled for the NPU: float16 K/V for the decoder graphs
        (the w8a16 step may replace cp_step's: ``quant_path``)."""
        if key in self.decoder_keys():
            return self.npu_dir / f"{key}.onnx"
        return self.onnx(key)

    def quant_path(self) -> Path:
        return self.npu_dir / f"{layout.CP_STEP}.w8a16.onnx"

    def gate_codec(self) -> Path:
        return self.gate_dir / f"{layout.codec_key(_upstream_frames())}.onnx"

    def export_outputs(self) -> list[Path]:
        keys = self.graph_keys()
        npu = [self.npu_onnx(k) for k in self.decoder_keys()]
        return [self.onnx(k) for k in keys] + npu + [self.gate_codec()]

    def table_outputs(self) -> list[Path]:
        names = [layout.TEXT_EMBEDDING, layout.CODEC_EMBEDDING, layout.CP_EMBEDDING,
                 layout.TOKENIZER]  # fmt: skip
        if self.src.kind == "base":
            names.append(layout.MEL_BASIS)
        return [self.stage / n for n in names]

    # steps -------------------------------------------------------------------
    def export(self) -> dict:
        """Every graph as fp32 ONNX; the talker and predictor again with fp16
        K/V; the codec at upstream's chunk (+ context) for its CPU gate."""
        from scripts.qwen3.tts.graphs import export

        m, f16, codec = self.model, torch.float16, self.codec.model
        export.export_text_proj(m, TEXT_ROWS, self.onnx(layout.TEXT_PROJ))
        for p in self.prefill_buckets:
            key = layout.talker_prefill_key(p)
            export.export_talker_prefill(m, p, self.onnx(key))
            export.export_talker_prefill(m, p, self.npu_onnx(key), f16)
        for n in self.kv_buckets:
            key = layout.talker_decode_key(n)
            export.export_talker_decode(m, n, self.onnx(key))
            export.export_talker_decode(m, n, self.npu_onnx(key), f16)
        export.export_cp_step(m, self.onnx(layout.CP_STEP))
        export.export_cp_step(m, self.npu_onnx(layout.CP_STEP), f16)
        for t in self.codec_frames:
            export.export_codec(codec, t, self.onnx(layout.codec_key(t)))
        export.export_codec(codec, _upstream_frames(), self.gate_codec())
        for f in self.xvector_buckets:
            export.export_speaker(m, f, self.onnx(layout.speaker_key(f)))
        return {k: self.onnx(k).stat().st_size for k in self.graph_keys()}

    def write_tables(self, codec_params: dict[str, Any]) -> dict:
        """The CPU arrays, text/tokenizer.json and the params (this step's
        result): tables.py."""
        return tables.write_tables(self, codec_params)


def _upstream_frames() -> int:
    from scripts.qwen3.tts.windows import UPSTREAM_CHUNK, UPSTREAM_CONTEXT

    return UPSTREAM_CHUNK + UPSTREAM_CONTEXT
