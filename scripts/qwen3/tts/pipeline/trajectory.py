"""The gates' one deterministic input: upstream's greedy run of a fixed text.

A forward pre-hook on the talker's decoder stack records the rows upstream
feeds it (the prompt, then one row per step: codec embeddings + trailing
text), while ``Qwen3TTSForConditionalGeneration.generate`` runs greedily (talker
and predictor) for a few frames, as the checkpoint's entry point would:
CustomVoice with its first speaker, Base with the x-vector of a fixed clip
(upstream's mel and speaker encoder), each in upstream's default text mode.
The gates then teacher-force the graphs on exactly those rows and codes.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from scripts.qwen3.tts.graphs import gates
from scripts.qwen3.tts.pipeline import prompt
from scripts.qwen3.tts.pipeline.context import XVECTOR_MEL, BuildContext

_LOGGER = logging.getLogger(__name__)
#: mixed English and Chinese, as users write (both tokenizer paths)
TEXT: Final = "Hello world. 你好。"
LANGUAGE: Final = "auto"
#: greedy talker calls (frames + 1: the last code0 never gets a frame)
CALLS: Final = 9
#: the fixed clip of the x-vector: a chirp in noise, seeded
CLIP_SEED: Final = 1234
CLIP_LEVEL: Final = 0.3
CLIP_MARGIN_S: Final = 0.5


class TrajectoryError(RuntimeError):
    """The gate input does not fit the buckets."""


@dataclass(frozen=True)
class GateInputs:
    text: list[int]  # the text's token ids (text_proj)
    prompt: np.ndarray  # [n, Ht] the talker's prompt rows
    steps: np.ndarray  # [frames, Ht] the rows fed after it
    codes: np.ndarray  # [frames, 16] upstream's greedy codes
    hidden: np.ndarray  # [frames, Ht] past_hidden per frame (predictor input)
    mel: np.ndarray  # [F, n_mels] the clip's x-vector mel (Base; else empty)


def gate_clip(seconds: float, sample_rate: int) -> np.ndarray:
    """A deterministic float32 clip: a 200-3000 Hz chirp in noise."""
    t = np.arange(int(seconds * sample_rate)) / sample_rate
    sweep = 200.0 * t + (2800.0 / (2 * seconds)) * t**2
    noise = np.random.default_rng(CLIP_SEED).standard_normal(t.size)
    return (CLIP_LEVEL * (np.sin(2 * np.pi * sweep) + 0.3 * noise)).astype(np.float32)


def _mel(ctx: BuildContext) -> np.ndarray:
    """Upstream's x-vector mel [F, 128] of a clip filling the largest bucket."""
    import torch

    from scripts.qwen3.tts.upstream import import_qwen_tts

    m, sr = XVECTOR_MEL, XVECTOR_MEL["sample_rate"]
    seconds = (max(ctx.xvector_buckets) * m["hop"]) / sr + CLIP_MARGIN_S
    clip = torch.from_numpy(gate_clip(seconds, sr))[None]
    mel = import_qwen_tts().modeling.mel_spectrogram(
        clip,
        n_fft=m["n_fft"],
        num_mels=m["n_mels"],
        sampling_rate=sr,
        hop_size=m["hop"],
        win_size=m["win"],
        fmin=m["fmin"],
        fmax=m["fmax"],
    )
    return np.ascontiguousarray(mel[0].T.numpy(), np.float32)


def gate_inputs(ctx: BuildContext) -> GateInputs:
    """The gate input of ``ctx`` (computed once per context)."""
    from scripts.qwen3.tts.upstream import torch_threads

    cached = ctx.__dict__.get("_gate_inputs")
    if cached is None:
        with torch_threads(1):
            cached = ctx.__dict__["_gate_inputs"] = _greedy(ctx)
    return cached


def _greedy(ctx: BuildContext) -> GateInputs:
    import torch

    tts, model = ctx.tts, ctx.model
    mel = _mel(ctx) if ctx.src.kind == "base" else np.zeros((0, 0), np.float32)
    kwargs: dict[str, Any] = {"languages": [LANGUAGE]}
    if ctx.src.kind == "base":
        with torch.no_grad():
            xvec = model.speaker_encoder(torch.from_numpy(mel)[None])[0]
        kwargs["voice_clone_prompt"] = {
            "ref_spk_embedding": [xvec],
            "x_vector_only_mode": [True],
            "icl_mode": [False],
            "ref_code": None,
        }
    else:
        kwargs["speakers"] = [sorted(ctx.src.talker.spk_id)[0]]
    mode = prompt.text_mode(ctx.src, type(tts))
    rows: list[np.ndarray] = []

    def hook(_module: Any, _args: Any, kw: dict[str, Any]) -> None:
        rows.append(kw["inputs_embeds"][0].detach().float().numpy().copy())

    handle = model.talker.model.register_forward_pre_hook(hook, with_kwargs=True)
    try:
        ids = tts._tokenize_texts([tts._build_assistant_text(TEXT)])
        with torch.no_grad():
            codes, _ = model.generate(
                input_ids=ids,
                non_streaming_mode=mode == "non_streaming",
                do_sample=False,
                subtalker_dosample=False,
                max_new_tokens=CALLS,
                **kwargs,
            )
    finally:
        handle.remove()
    codes = codes[0].numpy().astype(np.int64)
    prompt_rows, steps = rows[0], np.concatenate(rows[1:])[: len(codes)]
    n = len(prompt_rows)
    if n > min(ctx.prefill_buckets):
        raise TrajectoryError(
            f"prefill bucket {min(ctx.prefill_buckets)}: the gate prompt has {n} "
            f"rows ({TEXT!r}, {mode.replace('_', '-')} text)"
        )
    _, h = gates.talker_reference(model, np.concatenate([prompt_rows, steps]))
    text = tts.processor.tokenizer(TEXT)["input_ids"]
    _LOGGER.info(
        "gate input: %d prompt rows, %d greedy frames (%s text)", n, len(codes), mode
    )
    return GateInputs(
        list(text), prompt_rows, steps, codes, h[n - 1 : n - 1 + len(codes)], mel
    )
