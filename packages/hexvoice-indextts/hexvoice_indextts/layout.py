"""The bundle's graphs, named as the build exports them and the engine looks
them up: one static graph per bucket of each role, ``<role>_<axis><size>``
(``gpt_prefill_P64``, ``dit_F96``, ``w2v_bert_R48``), and the buckets that
make them.  No torch: the engine reads this too."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Final

from hexvoice_indextts.gpt.generate import Sampling, decode_name, prefill_name

ENGINE_ID: Final = "indextts2"
#: the GPT's conditioning rows: the perceiver's 32 speaker latents
#: (UnifiedVoice: PerceiverResampler(num_latents=32)) and 2 speed rows
CONDITIONING_ROWS: Final = 32 + 2
#: rows a prompt adds to its text ids: start and stop text tokens, start mel
PROMPT_EXTRA_ROWS: Final = 3


def latent_name(rows: int) -> str:
    return f"gpt_latent_P{rows}"


def regulator_name(frames: int) -> str:
    return f"length_regulator_F{frames}"


def dit_name(frames: int) -> str:
    return f"dit_F{frames}"


def bigvgan_name(frames: int) -> str:
    return f"bigvgan_W{frames}"


def w2v_bert_name(rows: int) -> str:
    return f"w2v_bert_R{rows}"


def codec_name(rows: int) -> str:
    return f"semantic_codec_R{rows}"


def latents_name(rows: int) -> str:
    return f"speaker_latents_R{rows}"


def emotion_name(rows: int) -> str:
    return f"emotion_vector_R{rows}"


def campplus_name(frames: int) -> str:
    return f"campplus_F{frames}"


@dataclass(frozen=True)
class UtteranceBuckets:
    """Static lengths: GPT prompt rows, K/V cache positions, latent-pass rows,
    mel frames (length regulator, DiT), BigVGAN window frames; the windows'
    overlap in frames (at least BigVGAN's receptive field, checked at load)."""

    prefill: tuple[int, ...]
    decode: tuple[int, ...]
    latent: tuple[int, ...]
    regulator: tuple[int, ...]
    dit: tuple[int, ...]
    vocoder: tuple[int, ...]
    overlap: int
    beams: int = Sampling().num_beams


@dataclass(frozen=True)
class VoiceBuckets:
    """w2v-BERT feature rows (50 per second of clip; the codec and both GPT
    conditionings take the same rows), CAM++ fbank frames (100 per second),
    prompt mel frames (the length regulator, 22050 / hop per second)."""

    rows: tuple[int, ...]
    fbank: tuple[int, ...]
    mel: tuple[int, ...]


def bucket_sizes(
    buckets: UtteranceBuckets | VoiceBuckets,
) -> dict[str, tuple[int, ...]]:
    return {
        f.name: getattr(buckets, f.name)
        for f in fields(buckets)
        if isinstance(getattr(buckets, f.name), tuple)
    }


def graph_names(u: UtteranceBuckets, v: VoiceBuckets) -> tuple[str, ...]:
    """Every graph the buckets make, in manifest order (the length regulator's
    serve both the prompt's mel frames and an utterance's)."""
    by_size: list[tuple[Callable[[int], str], tuple[int, ...]]] = [
        (prefill_name, u.prefill), (decode_name, u.decode), (latent_name, u.latent),
        (regulator_name, tuple(sorted(set(u.regulator) | set(v.mel)))),
        (dit_name, u.dit), (bigvgan_name, u.vocoder),
        (w2v_bert_name, v.rows), (codec_name, v.rows), (latents_name, v.rows),
        (emotion_name, v.rows), (campplus_name, v.fbank),
    ]  # fmt: skip
    return tuple(name(n) for name, sizes in by_size for n in sorted(sizes))


def voice_graph_names(v: VoiceBuckets) -> tuple[str, ...]:
    """The graphs that make a voice of a clip (what a voice print depends on)."""
    by_size: list[tuple[Callable[[int], str], tuple[int, ...]]] = [
        (w2v_bert_name, v.rows), (codec_name, v.rows), (latents_name, v.rows),
        (emotion_name, v.rows), (campplus_name, v.fbank), (regulator_name, v.mel),
    ]  # fmt: skip
    return tuple(name(n) for name, sizes in by_size for n in sorted(sizes))


def segment_room(u: UtteranceBuckets) -> int:
    """The most text pieces a segment may have for the buckets: its prompt in
    the largest prefill graph, with room for a code in the K/V cache and the
    latent pass (whose text and codes each add start and stop rows)."""
    prompt = CONDITIONING_ROWS + PROMPT_EXTRA_ROWS
    return min(
        max(u.prefill) - prompt,
        max(u.decode) - prompt - 2,
        max(u.latent) - CONDITIONING_ROWS - 2 - 2 - 1,
    )
