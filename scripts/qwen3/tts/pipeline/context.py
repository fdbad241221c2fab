"""What every stage of the Qwen3-TTS build reads: its options (options.py),
the checked model and codec directories, upstream's model (loaded lazily: a
fully resumed run loads none) and the graphs' keys and paths in the work dir
(scripts/common/build/workdir.py, plus gate_onnx/ and model/)::

    onnx/<key>.onnx           fp32 graphs (bundle onnx/: the CPU backend; CPU gates)
    onnx_npu/<key>.onnx       talker/predictor graphs with float16 K/V (the NPU's)
    onnx_npu/cp_step.w8a16    the quantized code predictor (--cp-weights w8a16)
    gate_onnx/codec_325       upstream's 300 + 25 chunking, for the codec CPU gate
    stage/cpu, stage/text     bundle files other than graphs
    model/                    links to MODEL_DIR with speech_tokenizer -> --codec DIR
                              (only when the codec is elsewhere: upstream loads from it)
    bins/<key>.bin            compiled context binaries

Imports no model and no stage: each stage imports what it runs.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
from functools import cached_property
from pathlib import Path
from typing import Any, Final

from daemon.engines.qwen3.tts import params as layout
from scripts.common.build.run import hash_path
from scripts.qwen3.common.context import Qwen3Context
from scripts.qwen3.tts.pipeline.options import UPSTREAM_FRAMES, TtsOptions
from scripts.qwen3.tts.pipeline.source import CODEC_DIR, SAMPLE_RATE, ModelDir

_LOGGER = logging.getLogger(__name__)
#: text rows per text_proj call (params.text.rows; the contract's default:
#: a sentence's prompt in one or two calls)
TEXT_ROWS: Final = 32
#: a text_embedding this small or smaller keeps every table float32
EMBED_FP32_MAX_BYTES: Final = 64 << 20
#: upstream extract_speaker_embedding's mel_spectrogram arguments
#: (modeling_qwen3_tts.py; pad = (n_fft - hop) // 2, reflect, no centre)
XVECTOR_MEL: Final = {
    "sample_rate": 24000,
    "n_fft": 1024,
    "hop": 256,
    "win": 1024,
    "pad": 384,
    "n_mels": 128,
    "fmin": 0,
    "fmax": 12000,
}


def xvector_frames(seconds: float, sample_rate: int = SAMPLE_RATE) -> int:
    """Mel frames of a ``seconds`` clip (upstream mel_spectrogram: reflect pad
    on both sides, no centre: n samples give 1 + (n + 2 pad - n_fft) // hop)."""
    m = XVECTOR_MEL
    n = int(round(seconds * sample_rate))
    return 1 + (n + 2 * m["pad"] - m["n_fft"]) // m["hop"]


def tiny(src: ModelDir) -> bool:
    """A test-sized checkpoint: its text_embedding fits EMBED_FP32_MAX_BYTES in
    float32 (every table stays float32; torch runs single-threaded)."""
    t = src.talker
    return t.text_vocab_size * t.text_hidden_size * 4 <= EMBED_FP32_MAX_BYTES


def one_thread_if_tiny(src: ModelDir) -> contextlib.AbstractContextManager[Any]:
    """torch on one thread for a tiny model (its ops take microseconds: one
    thread beats a contended pool, export 20 s vs 97 s on the shared 2-core
    box), else as it is."""
    from scripts.qwen3.tts.upstream import torch_threads

    return torch_threads(1) if tiny(src) else contextlib.nullcontext()


def load_upstream(src: ModelDir, work: Path) -> Any:
    """Upstream's Qwen3TTSModel (fp32, eval, CPU) of ``src``, by upstream's own
    loader.  That loader reads the codec from MODEL/speech_tokenizer only; a
    codec elsewhere (``--codec``) is seen through ``work/model``, a directory of
    links to the model's files with speech_tokenizer -> the codec."""
    import torch

    from scripts.qwen3.tts.upstream import import_qwen_tts

    root = src.root
    if src.codec_root.resolve() != (root / CODEC_DIR).resolve():
        root = _linked(src, work / "model")
    with one_thread_if_tiny(src):
        tts = import_qwen_tts().Qwen3TTSModel.from_pretrained(
            str(root), dtype=torch.float32
        )
    tts.model.float().eval().requires_grad_(False)
    return tts


def _linked(src: ModelDir, out: Path) -> Path:
    """``out`` with a link to each of the model's files and speech_tokenizer ->
    the codec directory (rebuilt each time: the sources may have moved)."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for path in src.root.iterdir():
        if path.name != CODEC_DIR:
            (out / path.name).symlink_to(path.resolve())
    (out / CODEC_DIR).symlink_to(src.codec_root.resolve(), target_is_directory=True)
    return out


class BuildContext(Qwen3Context):
    opts: TtsOptions

    def __init__(self, opts: TtsOptions, src: ModelDir) -> None:
        super().__init__(opts, src.root.name)
        self.src = src
        self.codec_frames = opts.codec_frames
        buckets = {xvector_frames(s) for s in opts.xvector_seconds}
        self.xvector_buckets = tuple(sorted(buckets)) if src.kind == "base" else ()
        self.gate_dir = self.work / "gate_onnx"

    # model -------------------------------------------------------------------
    @cached_property
    def tts(self) -> Any:
        """Upstream's ``Qwen3TTSModel`` (fp32, eval, CPU) with the codec of
        ``src.codec_root``."""
        return load_upstream(self.src, self.work)

    @property
    def model(self) -> Any:
        """Qwen3TTSForConditionalGeneration."""
        return self.tts.model

    @property
    def codec(self) -> Any:
        """The 12 Hz codec (upstream's Qwen3TTSTokenizer)."""
        return self.tts.model.speech_tokenizer

    @cached_property
    def model_files(self) -> dict[str, str]:
        """Every model and codec file's sha256 (the stages reading the model
        are keyed by it; hashed once per run: at full size they are GBs)."""
        src = self.src
        _LOGGER.info("hashing %d model files in %s", len(src.all_files), src.root)
        files = {f"model/{p.name}": hash_path(p) for p in src.files}
        return files | {f"codec/{p.name}": hash_path(p) for p in src.codec_files}

    @property
    def shape(self) -> dict[str, list[int]]:
        """What the model's stages read besides the model: the graphs' sizes."""
        return {
            "prefill": list(self.prefill_buckets),
            "kv": list(self.kv_buckets),
            "codec": list(self.codec_frames),
            "xvector": list(self.xvector_buckets),
        }

    def keyed(self, **more: Any) -> dict[str, Any]:
        """The inputs of a stage reading the model's graphs: the model files,
        the graphs' sizes and ``more`` (the files it reads, its options)."""
        return {"model": self.model_files, "shape": self.shape, **more}

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

    def kv16_onnx(self, key: str) -> Path:
        """The graph with float16 K/V for a decoder graph, else its fp32 one."""
        if key in self.decoder_keys():
            return self.npu_onnx_path(key)
        return self.onnx(key)

    def npu_onnx(self, key: str) -> Path:
        """The graph compiled for the NPU: float16 K/V for the decoder graphs,
        the w8a16 code predictor when asked (``quant_path``)."""
        if key == layout.CP_STEP and self.opts.quantized:
            return self.quant_path()
        return self.kv16_onnx(key)

    def quant_path(self) -> Path:
        return self.npu_dir / f"{layout.CP_STEP}.w8a16.onnx"

    def gate_codec(self) -> Path:
        return self.gate_dir / f"{layout.codec_key(UPSTREAM_FRAMES)}.onnx"

    def export_outputs(self) -> list[Path]:
        npu = [self.kv16_onnx(k) for k in self.decoder_keys()]
        return [self.onnx(k) for k in self.graph_keys()] + npu + [self.gate_codec()]

    def table_outputs(self) -> list[Path]:
        names = [
            layout.TEXT_EMBEDDING,
            layout.CODEC_EMBEDDING,
            layout.CP_EMBEDDING,
            layout.TOKENIZER,
        ]
        if self.src.kind == "base":
            names.append(layout.MEL_BASIS)
        return [self.stage / n for n in names]
