"""The tables step: upstream's model loaded once, the CPU arrays, the
tokenizer and the bundle's params (daemon/engines/qwen3/tts/params.py).

CPU arrays (docs/qwen3.md, CPU side): the talker's text_embedding [Vt, Dt] and
codec_embedding [V, Ht], the predictor's 15 input tables [15, Vc, Ht] and, for
Base, the x-vector mel basis [128, 513] (upstream's own librosa slaney call, so
the runtime needs no librosa).  float16 at full size (text_embedding alone is
622 MB in fp16), float32 when the checkpoint is tiny, so the CPU backend runs a
test checkpoint bit-exact against upstream's fp32; ``embedding_dtype`` says
which.
"""

from __future__ import annotations

import contextlib
import inspect
import shutil
from pathlib import Path
from typing import Any, Final, Protocol

import numpy as np

from daemon.engines.qwen3.tts import params as layout
from scripts.qwen3.tts.pipeline import prompt
from scripts.qwen3.tts.pipeline.source import (
    CODEC_DIR,
    SAMPLE_RATE,
    SAMPLES_PER_FRAME,
    ModelDir,
)


class Build(Protocol):
    """What the tables step reads of a build (context.py's ``BuildContext``;
    a protocol, so the context can delegate here without a circular import)."""

    src: ModelDir
    stage: Path
    prefill_buckets: tuple[int, ...]
    kv_buckets: tuple[int, ...]
    xvector_buckets: tuple[int, ...]

    @property
    def tts(self) -> Any: ...

    @property
    def model(self) -> Any: ...

    @property
    def codec(self) -> Any: ...

#: a text_embedding this small or smaller keeps every table float32
EMBED_FP32_MAX_BYTES: Final = 64 << 20
#: text rows per text_proj call (params.text.rows; the contract's default:
#: a sentence's prompt in one or two calls)
TEXT_ROWS: Final = 32
#: additive mask value of the graphs (hexvoice's shapes.MASK_VALUE, docs/qwen3.md, CPU
#: side)
MASK_VALUE: Final = -100.0
#: upstream extract_speaker_embedding's mel_spectrogram arguments
#: (modeling_qwen3_tts.py; pad = (n_fft - hop) // 2, reflect, no centre)
XVECTOR_MEL: Final = {"sample_rate": 24000, "n_fft": 1024, "hop": 256, "win": 1024,
                      "pad": 384, "n_mels": 128, "fmin": 0, "fmax": 12000}  # fmt: skip


def tiny(src: ModelDir) -> bool:
    """A test-sized checkpoint: its text_embedding fits EMBED_FP32_MAX_BYTES in
    float32 (every table stays float32; torch runs single-threaded)."""
    t = src.talker
    return t.text_vocab_size * t.text_hidden_size * 4 <= EMBED_FP32_MAX_BYTES


def load_upstream(src: ModelDir, work: Path) -> Any:
    """Upstream's Qwen3TTSModel (fp32, eval, CPU) of ``src``, by upstream's own
    loader.  That loader reads the codec from MODEL/speech_tokenizer only; a
    codec elsewhere (``--codec``) is seen through ``work/model``, a directory of
    links to the model's files with speech_tokenizer -> the codec."""
    import torch

    from scripts.qwen3.tts.upstream import import_qwen_tts, torch_threads

    root = src.root
    if src.codec_root.resolve() != (root / CODEC_DIR).resolve():
        root = _linked(src, work / "model")
    with torch_threads(1) if tiny(src) else contextlib.nullcontext():
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


def arrays(model: Any) -> dict[str, np.ndarray]:
    """The CPU tables, float32 (write_tables picks their dtype)."""
    talker = model.talker
    cp = talker.code_predictor.model.codec_embedding

    def f32(w: Any) -> np.ndarray:
        return w.detach().float().numpy()

    return {
        layout.TEXT_EMBEDDING: f32(talker.model.text_embedding.weight),
        layout.CODEC_EMBEDDING: f32(talker.model.codec_embedding.weight),
        layout.CP_EMBEDDING: np.stack([f32(t.weight) for t in cp]),
    }


def mel_basis() -> np.ndarray:
    """[n_mels, n_fft/2 + 1]: upstream's librosa_mel_fn call, as its
    mel_spectrogram makes it (float32, as it casts)."""
    from scripts.qwen3.tts.upstream import import_qwen_tts

    m = XVECTOR_MEL
    fn = import_qwen_tts().modeling.librosa_mel_fn
    basis = fn(sr=m["sample_rate"], n_fft=m["n_fft"], n_mels=m["n_mels"],
               fmin=m["fmin"], fmax=m["fmax"])  # fmt: skip
    return np.asarray(basis, np.float32)


def write_tables(ctx: Build, codec: dict[str, Any]) -> dict:
    """Write the arrays and text/tokenizer.json under ``ctx.stage``; the params
    (with the measured ``codec`` windows) are the result."""
    tables = arrays(ctx.model)
    dtype = np.float32 if tiny(ctx.src) else np.float16
    shapes = {}
    for name, table in tables.items():
        path = ctx.stage / name
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, table.astype(dtype))
        shapes[name] = list(table.shape)
    if ctx.src.kind == "base":
        np.save(ctx.stage / layout.MEL_BASIS, mel_basis())
    tok = ctx.stage / layout.TOKENIZER
    tok.parent.mkdir(parents=True, exist_ok=True)
    # the fast tokenizer transformers builds from the checkpoint's files (a
    # vocab.json + merges.txt checkpoint gets converted here, once)
    ctx.tts.processor.tokenizer.backend_tokenizer.save(str(tok))
    return {
        "embedding_dtype": np.dtype(dtype).name,
        "shapes": shapes,
        "params": params(ctx, codec, np.dtype(dtype).name),
    }


def params(ctx: Build, codec: dict[str, Any], dtype: str) -> dict[str, Any]:
    """``voice.yaml`` params, checked by the engine's own schema."""
    from scripts.qwen3.tts.graphs import export

    src, model = ctx.src, ctx.model
    cls = type(ctx.tts)
    t, cp = src.talker, src.predictor
    rope, cp_rope = export.talker_rope(model), export.predictor_rope(model)
    tokenizer = ctx.tts.processor.tokenizer
    rendered = prompt.render_prompt(ctx.tts, tokenizer)
    raw = {
        "kind": src.kind,
        "talker": {
            "hidden": t.hidden_size,
            "head_dim": t.head_size,
            "layers": t.num_hidden_layers,
            "kv_heads": t.num_key_value_heads,
            "vocab": t.vocab_size,
            "rope_theta": rope.theta,
            "attention_scaling": rope.attention_scaling,
        },  # fmt: skip
        "text": {
            "hidden": t.text_hidden_size,
            "rows": TEXT_ROWS,
            "vocab": t.text_vocab_size,
        },  # fmt: skip
        "predictor": {
            "hidden": cp.hidden_size,
            "head_dim": cp.head_dim,
            "layers": cp.num_hidden_layers,
            "kv_heads": cp.num_key_value_heads,
            "vocab": cp.vocab_size,
            "rope_theta": cp_rope.theta,
            "attention_scaling": cp_rope.attention_scaling,
            "groups": cp.num_code_groups,
        },  # fmt: skip
        "prefill_buckets": list(ctx.prefill_buckets),
        "kv_buckets": list(ctx.kv_buckets),
        "tokens": prompt.token_ids(src, tokenizer, rendered["template"]),
        "prompt": rendered,
        "languages": dict(t.codec_language_id),
        "speakers": prompt.speakers(src),
        "sampling": prompt.sampling(src, cls),
        "text_mode": prompt.text_mode(src, cls),
        "embedding_dtype": dtype,
        "codec": {
            "sample_rate": SAMPLE_RATE,
            "samples_per_frame": SAMPLES_PER_FRAME,
            **upstream_chunking(ctx.codec),
            **codec,
        },  # fmt: skip
        "xvector": _xvector(ctx),
        "mask_value": MASK_VALUE,
    }
    return layout.TtsParams.from_mapping(raw, where="params: ").to_dict()


def upstream_chunking(codec: Any) -> dict[str, int]:
    """chunk_frames / left_context: upstream chunked_decode's own defaults."""
    from scripts.qwen3.tts.windows import _decoder

    sig = inspect.signature(_decoder(codec).chunked_decode).parameters
    return {"chunk_frames": int(sig["chunk_size"].default),
            "left_context": int(sig["left_context_size"].default)}  # fmt: skip


def _xvector(ctx: Build) -> dict[str, Any] | None:
    if ctx.src.kind != "base":
        return None
    enc = ctx.src.config.speaker_encoder_config
    assert enc is not None  # source.py: a base checkpoint has one
    if enc.mel_dim != XVECTOR_MEL["n_mels"]:
        raise prompt.PromptError(
            f"{ctx.src.root / 'config.json'}: speaker_encoder_config.mel_dim: "
            f"expected {XVECTOR_MEL['n_mels']} (upstream's extract_speaker_embedding "
            f"mel), found {enc.mel_dim}"
        )
    from scripts.qwen3.tts.graphs.speaker import reflect_pad

    return {**XVECTOR_MEL, "frame_buckets": list(ctx.xvector_buckets),
            "dim": enc.enc_dim, "reflect_pad": reflect_pad(ctx.model)}  # fmt: skip
