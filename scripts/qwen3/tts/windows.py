"""Codec windows: how much left context a streaming decode window needs.

Upstream's ``decode`` (``chunked_decode``: 300-frame chunks with 25 frames of
left context, qwen3.md §2.6) decodes a whole utterance at once.  The engine
streams instead (daemon/engines/qwen3tts/stream.py, params.CodecWindow): the
first ``first_frames`` frames with no context (nothing precedes them) in the
smallest ``codec_<T>`` graph that holds them, then window i >= 1 in
``windows[min(i-1, len-1)]``: ``frames`` codes per call of which the first
``context`` are left context (decoded again, their samples dropped; fewer when
fewer frames exist), right-padded when partial (the codec is causal, so the
valid prefix is unchanged).

The pre-transformer attends over a 72-frame sliding window and the convolutions
see a few frames back, so a window without enough context differs from the
whole-utterance decode near its start.  ``measure`` runs that schedule through
the model's own codec (upstream's torch decoder) for each candidate window and
context, against upstream's ``decode`` of the same codes, and reports SNR and
log-mel L1; ``choose`` takes the smallest context meeting both bounds.

Why the defaults (build.py): 40 then 100 frames, contexts measured.  An NPU
call of the codec costs about its frames, so a window of T frames with C of
context does T - C new frames per T decoded; the context a window can be given
is capped at 3/4 of it (MIN_NEW_SHARE), so 40 and 100 leave room for upstream's
own 25 and more (measured on the tiny random codec, whose 72-frame attention is
context-hungry: 100 frames pass at C = 48, SNR 21.3 dB, L1 0.030, while 80
frames reach only L1 0.048 / 18.9 dB at 48; <= 32 frames never pass).  The first
audio waits for 8 frames (0.64 s of speech, no context, exact) and one call of
the 40-frame graph, not the 100-frame one; the steady window streams 4-6 s of
audio per call, more than it takes to generate at RTF < 1.  A window whose
context cannot be found stops the build naming it (give FRAMES:CONTEXT).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from scripts.common.parity import snr_db

#: upstream's extract_speaker_embedding mel (modeling_qwen3_tts.py): the model
#: family's own log-mel, used as the spectral distance of codec outputs
MEL: Final = dict(n_fft=1024, num_mels=128, sampling_rate=24000, hop_size=256,
                  win_size=1024, fmin=0, fmax=12000)  # fmt: skip
#: the issue's bound for a streaming window vs upstream's decode
MAX_LOG_MEL_L1: Final = 0.05
#: and a waveform bound, so a window cannot pass on the spectrum alone
#: (a phase-shifted or mis-stitched window keeps its mel but not its SNR)
MIN_SNR_DB: Final = 20.0
#: candidate left contexts, in frames (upstream uses 25 for 300-frame chunks)
CONTEXTS: Final = (0, 2, 4, 8, 12, 16, 24, 25, 32, 48, 64, 72)
#: a candidate keeps at least this share of its frames new (less is wasteful)
MIN_NEW_SHARE: Final = 0.25
#: measured codes: fixed seed; frames: 3 steady windows of the largest, capped
#: at upstream's chunk so its decode is one forward (the plain reference)
SEED: Final = 1234
MAX_FRAMES: Final = 300
#: upstream chunked_decode (chunk_size, left_context_size) and its graph
UPSTREAM_CHUNK: Final = 300
UPSTREAM_CONTEXT: Final = 25
#: the codec_325 graph in upstream's chunking equals upstream's decode
MIN_UPSTREAM_SNR_DB: Final = 90.0
UPSTREAM_GATE_FRAMES: Final = 400

Decode = Callable[[np.ndarray], np.ndarray]  # codes [G, n] -> wav [n * spf]


@dataclass(frozen=True)
class Window:
    """A codec graph of ``frames`` codes per call; ``context`` None: measured."""

    frames: int
    context: int | None = None


def parse_windows(text: str) -> tuple[Window, ...]:
    """``"16,80"`` or ``"16:8,80:24"`` (FRAMES[:CONTEXT], comma-separated)."""
    out = []
    for part in text.split(","):
        frames, _, context = part.strip().partition(":")
        try:
            w = Window(int(frames), int(context) if context else None)
        except ValueError:
            raise ValueError(f"expected FRAMES[:CONTEXT],..., e.g. 16,80 or "
                             f"16:8,80:24; found {text!r}") from None  # fmt: skip
        if w.frames < 1 or (w.context is not None and not 0 <= w.context < w.frames):
            raise ValueError(f"window {part!r}: expected frames >= 1 and "
                             "0 <= context < frames")  # fmt: skip
        out.append(w)
    return tuple(out)


def schedule(
    n: int, windows: Sequence[tuple[int, int]], first_frames: int
) -> list[tuple[int, int, int, int]]:
    """(graph frames, start, context, end) of each call for ``n`` frames:
    frames [start - context, end) decoded, the first context frames dropped.
    The engine's own schedule (daemon/engines/qwen3tts/stream.py), so the
    measurement is of what the engine runs."""
    from daemon.engines.qwen3tts.stream import Schedule

    first_graph = next(t for t in sorted(f for f, _ in windows) if t >= first_frames)
    plan = Schedule(first_frames, first_graph, tuple((f, c) for f, c in windows))
    calls, start = [], 0
    while start < n:
        w = plan.window(len(calls), start, n)
        calls.append((w.graph, w.start, w.context, w.stop))
        start = w.stop
    return calls


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

    dec = _decoder(codec)

    def run(codes: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            x = torch.from_numpy(np.ascontiguousarray(codes, np.int64))[None]
            return dec(x.clamp(min=0))[0, 0].float().numpy()

    return run


def upstream_decode(codec: Any, codes: np.ndarray) -> np.ndarray:
    """Upstream's ``decode`` of ``codes`` [G, n]: clamp, chunked_decode(300, 25)."""
    import torch

    with torch.inference_mode():
        x = torch.from_numpy(np.ascontiguousarray(codes, np.int64))[None]
        return _decoder(codec).chunked_decode(x.clamp(min=0))[0, 0].float().numpy()


def _decoder(codec: Any) -> Any:
    """The Qwen3TTSTokenizerV2Decoder of a codec model / tokenizer wrapper."""
    for path in ("decoder", "model.decoder", "model.model.decoder"):
        obj = codec
        for name in path.split("."):
            obj = getattr(obj, name, None)
        if obj is not None and hasattr(obj, "chunked_decode"):
            return obj
    if hasattr(codec, "chunked_decode"):
        return codec
    raise TypeError(f"{type(codec).__name__}: no 12 Hz codec decoder found")


@functools.cache
def _mel_basis() -> np.ndarray:
    """upstream's librosa_mel_fn call of mel_spectrogram (slaney), float64."""
    from scripts.qwen3.tts.upstream import import_qwen_tts

    fn = import_qwen_tts().modeling.librosa_mel_fn
    return np.asarray(
        fn(sr=MEL["sampling_rate"], n_fft=MEL["n_fft"], n_mels=MEL["num_mels"],
           fmin=MEL["fmin"], fmax=MEL["fmax"]),
        np.float64,
    )  # fmt: skip


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


def candidates(frames: int) -> list[int]:
    """The contexts tried for a window of ``frames``."""
    top = frames - max(1, math.ceil(MIN_NEW_SHARE * frames))
    return [c for c in CONTEXTS if c <= top]


def score(reference: np.ndarray, test: np.ndarray) -> dict[str, float]:
    snr = snr_db(reference, test)
    return {"snr_db": round(snr, 2) if math.isfinite(snr) else 999.0,
            "log_mel_l1": round(log_mel_l1(reference, test), 5)}  # fmt: skip


def passes(row: dict[str, float]) -> bool:
    return row["log_mel_l1"] <= MAX_LOG_MEL_L1 and row["snr_db"] >= MIN_SNR_DB


def measure(
    codec: Any,
    sizes: Sequence[int],
    samples_per_frame: int,
    codebook: int,
    log: Callable[[str], None] = lambda _: None,
) -> list[dict[str, Any]]:
    """One row per (window frames, context): the window alone as the steady
    window (first window of the same size), vs upstream's decode."""
    if not sizes:
        return []
    n = min(MAX_FRAMES, 3 * max(sizes))
    codes = test_codes(codebook, n)
    ref = upstream_decode(codec, codes)
    dec = torch_decoder(codec)
    rows = []
    for frames in sorted(set(sizes)):
        for ctx in candidates(frames):
            got = stream_decode(dec, codes, [(frames, ctx)], frames, samples_per_frame)
            row = {"frames": frames, "context": ctx, "codes": n, **score(ref, got)}
            rows.append(row)
            log(f"codec window {frames} context {ctx}: SNR {row['snr_db']:.1f} dB, "
                f"log-mel L1 {row['log_mel_l1']:.4f}")  # fmt: skip
            if passes(row):
                break  # the smallest passing context: larger ones only cost
    return rows


def measure_given(
    codec: Any,
    frames: int,
    context: int,
    samples_per_frame: int,
    codebook: int,
    log: Callable[[str], None] = lambda _: None,
) -> list[dict[str, Any]]:
    """The row of a window whose context was given (kept as given)."""
    n = min(MAX_FRAMES, 3 * frames)
    codes = test_codes(codebook, n)
    got = stream_decode(torch_decoder(codec), codes, [(frames, context)], frames,
                        samples_per_frame)  # fmt: skip
    row = {"frames": frames, "context": context, "codes": n, "given": True,
           **score(upstream_decode(codec, codes), got)}  # fmt: skip
    log(f"codec window {frames} context {context} (given): SNR {row['snr_db']:.1f} "
        f"dB, log-mel L1 {row['log_mel_l1']:.4f}")  # fmt: skip
    return [row]


def choose(rows: Sequence[dict[str, Any]], frames: int) -> int:
    """The smallest measured context of ``frames`` that passes; ValueError
    naming the best one when none does."""
    mine = [r for r in rows if r["frames"] == frames]
    ok = [r["context"] for r in mine if passes(r)]
    if ok:
        return min(ok)
    best = min(mine, key=lambda r: r["log_mel_l1"], default=None)
    raise ValueError(
        f"codec window {frames}: no left context up to "
        f"{max(candidates(frames), default=0)} frames reaches log-mel L1 <= "
        f"{MAX_LOG_MEL_L1} and SNR >= {MIN_SNR_DB} dB (best: {best}); use a "
        "larger window or give FRAMES:CONTEXT"
    )


def measure_schedule(
    codec: Any,
    windows: Sequence[tuple[int, int]],
    first_frames: int,
    samples_per_frame: int,
    codebook: int,
) -> dict[str, Any]:
    """The chosen schedule as the engine runs it, vs upstream's decode."""
    n = min(MAX_FRAMES, 3 * max(f for f, _ in windows))
    codes = test_codes(codebook, n)
    got = stream_decode(torch_decoder(codec), codes, windows, first_frames,
                        samples_per_frame)  # fmt: skip
    return {"windows": [list(w) for w in windows], "first_frames": first_frames,
            "codes": n, **score(upstream_decode(codec, codes), got)}  # fmt: skip
