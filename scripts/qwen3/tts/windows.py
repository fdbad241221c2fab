"""Codec windows: the engine's schedule run through upstream's torch decoder,
upstream's own ``decode`` (float32 and float64) and the log-mel (upstream's
x-vector mel, oracle_audio.py ``MEL``: the model family's own, used as the
spectral distance of codec outputs).

Upstream's ``decode`` (``chunked_decode``: 300-frame chunks with 25 frames of
left context, docs/qwen3.md, codec decoder) decodes a whole utterance at once.  The
engine streams instead (daemon/engines/qwen3/tts/stream.py, params.CodecWindow): the
first ``first_frames`` frames with no context (nothing precedes them) in the
smallest ``codec_<T>`` graph that holds them, then window i >= 1 in
``windows[min(i-1, len-1)]``: up to ``context`` frames of left context (decoded
again, their samples dropped; never before upstream's own call for that chunk
starts) and new frames filling the graph, never past upstream's chunk end,
right-padded when partial (the codec is causal, so the valid prefix is
unchanged).  Which contexts, and what a schedule costs: codec_plan.py; the
window option and its syntax: pipeline/context.py.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from scripts.common.parity import snr_db
from scripts.qwen3.tts.oracle_audio import CHUNK_FRAMES, LEFT_CONTEXT, MEL, decoder_of

#: a window keeps at least this share of its frames new (less is wasteful)
MIN_NEW_SHARE: Final = 0.25
#: measured codes: fixed seed
SEED: Final = 1234
#: upstream chunked_decode (chunk_size, left_context_size): oracle_audio's
UPSTREAM_CHUNK: Final = CHUNK_FRAMES
UPSTREAM_CONTEXT: Final = LEFT_CONTEXT
#: frames of the codec_325 gate and of a schedule's measurement: more than one
#: upstream chunk, so the chunk boundary is measured too
UPSTREAM_GATE_FRAMES: Final = 400

Decode = Callable[[np.ndarray], np.ndarray]  # codes [G, n] -> wav [n * spf]


def schedule(
    n: int, windows: Sequence[tuple[int, int]], first_frames: int
) -> list[tuple[int, int, int, int]]:
    """(graph frames, start, context, end) of each call for ``n`` frames:
    frames [start - context, end) decoded, the first context frames dropped.
    The engine's own schedule (daemon/engines/qwen3/tts/stream.py), so the
    measurement is of what the engine runs."""
    return [
        (w.graph, w.start, w.context, w.stop)
        for w in engine_schedule(windows, first_frames).plan(n)
    ]


def engine_schedule(windows: Sequence[tuple[int, int]], first_frames: int) -> Any:
    """The engine's Schedule of these windows, in upstream's chunks."""
    from daemon.engines.qwen3.tts.codec.stream import schedule_of_windows

    return schedule_of_windows(
        first_frames, [(f, c) for f, c in windows], UPSTREAM_CHUNK, UPSTREAM_CONTEXT
    )


def stream_decode(
    decode: Decode,
    codes: np.ndarray,
    windows: Sequence[tuple[int, int]],
    first_frames: int,
    samples_per_frame: int,
) -> np.ndarray:
    """The engine's streaming schedule over ``codes`` [G, n] with ``decode``
    (exactly the frames given; a graph right-pads them)."""
    parts, spf = [], samples_per_frame
    for _, start, ctx, end in schedule(codes.shape[1], windows, first_frames):
        wav = decode(codes[:, start - ctx : end])
        parts.append(wav[ctx * spf : (end - start + ctx) * spf])
    return np.concatenate(parts)


def torch_decoder(codec: Any) -> Decode:
    """One plain forward of upstream's codec decoder (no chunking)."""
    import torch

    dec = decoder_of(codec)

    def run(codes: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            x = torch.from_numpy(np.ascontiguousarray(codes, np.int64))[None]
            return dec(x.clamp(min=0))[0, 0].float().numpy()

    return run


def upstream_decode(codec: Any, codes: np.ndarray, float64: bool = False) -> np.ndarray:
    """Upstream's ``decode`` of ``codes`` [G, n]: clamp, chunked_decode(300, 25);
    ``float64``: upstream's decoder cast to double (the float32 floor's
    reference; cast back after, exactly)."""
    import torch

    from scripts.common.floor import in_float64

    dec = decoder_of(codec)
    x = torch.from_numpy(np.ascontiguousarray(codes, np.int64))[None].clamp(min=0)
    with torch.inference_mode():
        if not float64:
            return dec.chunked_decode(x)[0, 0].float().numpy()
        with in_float64(dec):
            return dec.chunked_decode(x)[0, 0].numpy()


def decoder_config(codec: Any) -> Any:
    """The Qwen3TTSTokenizerV2DecoderConfig of a codec (its receptive field)."""
    return decoder_of(codec).config


@functools.cache
def _mel_basis() -> np.ndarray:
    """upstream's librosa_mel_fn call of mel_spectrogram (slaney), float64."""
    from scripts.qwen3.tts.upstream import import_qwen_tts

    fn = import_qwen_tts().modeling.librosa_mel_fn
    return np.asarray(
        fn(
            sr=MEL["sampling_rate"],
            n_fft=MEL["n_fft"],
            n_mels=MEL["num_mels"],
            fmin=MEL["fmin"],
            fmax=MEL["fmax"],
        ),
        np.float64,
    )


def log_mel(wav: np.ndarray) -> np.ndarray:
    """[frames, 128] log-mel of a 24 kHz wave as upstream's mel_spectrogram
    computes it (reflect pad (n_fft - hop) / 2, periodic Hann, no centre,
    sqrt(|X|^2 + 1e-9), slaney mel, ln of clamp 1e-5), in float64 numpy: the
    measurement decodes many windows and torch's STFT per call is slow here."""
    n_fft, hop = MEL["n_fft"], MEL["hop_size"]
    pad = (n_fft - hop) // 2
    x = np.pad(np.asarray(wav, np.float64), pad, mode="reflect")
    frames = np.lib.stride_tricks.sliding_window_view(x, n_fft)[::hop]
    window = np.hanning(n_fft + 1)[:-1]  # periodic Hann (torch.hann_window)
    spec = np.fft.rfft(frames * window, axis=-1)
    mag = np.sqrt(spec.real**2 + spec.imag**2 + 1e-9)
    return np.log(np.maximum(mag @ _mel_basis().T, 1e-5))


def log_mel_l1(reference: np.ndarray, test: np.ndarray) -> float:
    """Mean |log-mel difference| of two 24 kHz waves of the same length."""
    if reference.shape != test.shape:
        raise ValueError(f"length mismatch: {reference.shape} vs {test.shape}")
    return float(np.mean(np.abs(log_mel(reference) - log_mel(test))))


def test_codes(codebook: int, frames: int, groups: int = 16) -> np.ndarray:
    """Fixed uniform random codes [groups, frames] (every code equally likely:
    harder on the decoder than speech, which repeats)."""
    rng = np.random.default_rng(SEED)
    return rng.integers(0, codebook, size=(groups, frames), dtype=np.int64)


def score(reference: np.ndarray, test: np.ndarray) -> dict[str, float]:
    snr = snr_db(reference, test)
    return {
        "snr_db": round(snr, 2) if math.isfinite(snr) else 999.0,
        "log_mel_l1": round(log_mel_l1(reference, test), 5),
    }
