"""Upstream references for Qwen3-TTS's audio ends: the 12 Hz codec decoder and the
Base checkpoint's x-vector (speaker encoder and its mel).

``codec`` arguments are upstream's ``Qwen3TTSTokenizer`` (``load_codec(dir)``, or
``oracle.load(model_dir).model.speech_tokenizer``, the same class); ``tts`` is
``oracle.load(model_dir)``. All numpy in, numpy out, CPU fp32.

Upstream quirks (docs/qwen3.md, x-vector mel; codec decoder):
- ``Qwen3TTSTokenizer.decode`` clamps codes to >= 0 and decodes in chunks of 300
  frames with 25 frames of left context (the first chunk has none), restarting
  positions and the sliding window per chunk: it is not one forward.
- ``extract_speaker_embedding`` asserts 24 kHz; ``create_voice_clone_prompt``
  resamples other rates with librosa first (and also runs the Mimi encoder).
- The mel is reflect-padded by (n_fft - hop) / 2 = 384 on both sides, center
  False, magnitude sqrt(re² + im² + 1e-9), slaney mel 0-12 kHz, log clamp 1e-5.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Final

import numpy as np

from scripts.qwen3.tts.upstream import import_qwen_tts, torch_threads

SAMPLE_RATE: Final = 24000
#: extract_speaker_embedding's mel_spectrogram arguments (modeling_qwen3_tts.py).
MEL: Final = {
    "n_fft": 1024,
    "num_mels": 128,
    "sampling_rate": SAMPLE_RATE,
    "hop_size": 256,
    "win_size": 1024,
    "fmin": 0,
    "fmax": 12000,
}
#: Qwen3TTSTokenizerV2Model.decode -> chunked_decode defaults.
CHUNK_FRAMES: Final = 300
LEFT_CONTEXT: Final = 25


@functools.lru_cache(maxsize=4)
def load_codec(codec_dir: Path | str) -> Any:
    """Upstream's Qwen3TTSTokenizer of a speech_tokenizer directory (cached)."""
    import torch

    up = import_qwen_tts()
    with torch_threads(1):
        codec = up.Qwen3TTSTokenizer.from_pretrained(
            str(codec_dir), dtype=torch.float32
        )
    codec.model.float().eval()
    return codec


def decoder_of(codec: Any) -> Any:
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


def _codes_tensor(codes: np.ndarray) -> Any:
    """[n, 16] ints -> long [1, 16, n] (the decoder's layout)."""
    import torch

    arr = np.asarray(codes, np.int64)
    if arr.ndim != 2 or arr.shape[1] != 16:
        raise ValueError(f"codes must be [n, 16], got {arr.shape}")
    return torch.from_numpy(arr.T.copy())[None]


def decode(codec: Any, codes: np.ndarray) -> np.ndarray:
    """Upstream's own decode (Qwen3TTSTokenizer.decode: clamp, 300/25 chunks):
    float32 [1920 * n]."""
    import torch

    arr = np.asarray(codes, np.int64)
    with torch_threads(1), torch.no_grad():
        wavs, sr = codec.decode([{"audio_codes": arr}])
    if sr != SAMPLE_RATE:
        raise AssertionError(f"codec says {sr} Hz")
    return np.asarray(wavs[0], np.float32)


def decode_chunked(
    codec: Any, codes: np.ndarray, chunk_frames: int, left_context: int
) -> np.ndarray:
    """Upstream's chunked_decode with other chunk / context sizes (the streaming
    window measurement): float32 [1920 * n]."""
    import torch

    decoder = codec.model.decoder
    with torch_threads(1), torch.no_grad():
        wav = decoder.chunked_decode(_codes_tensor(codes), chunk_frames, left_context)
    return wav[0, 0].float().numpy()


def decode_plain(codec: Any, codes: np.ndarray) -> np.ndarray:
    """One forward of upstream's decoder over all codes (what one codec_<T> graph
    computes): float32 [1920 * n], clamped to ±1 as upstream."""
    import torch

    with torch_threads(1), torch.no_grad():
        wav = codec.model.decoder(_codes_tensor(codes))
    return wav[0, 0].float().numpy()


def mel(clip24k: np.ndarray) -> np.ndarray:
    """Upstream's mel_spectrogram as extract_speaker_embedding calls it:
    float32 [frames, 128] (frames = len // 256 for a reflect-padded clip)."""
    import torch

    up = import_qwen_tts()
    y = torch.from_numpy(np.asarray(clip24k, np.float32).copy())[None]
    with torch_threads(1), torch.no_grad():
        out = up.modeling.mel_spectrogram(y, **MEL)
    return out[0].T.float().numpy()


def speaker_embedding(tts: Any, clip24k: np.ndarray) -> np.ndarray:
    """model.extract_speaker_embedding(clip, 24000): the x-vector float32 [D]."""
    with torch_threads(1):
        xv = tts.model.extract_speaker_embedding(
            np.asarray(clip24k, np.float32), SAMPLE_RATE
        )
    return xv.float().cpu().numpy()


def speaker_from_mel(tts: Any, mel_frames: np.ndarray) -> np.ndarray:
    """The speaker encoder on a given mel [F, 128] (what one speaker_<F> graph
    computes): float32 [D]."""
    import torch

    x = torch.from_numpy(np.asarray(mel_frames, np.float32).copy())[None]
    with torch_threads(1), torch.no_grad():
        xv = tts.model.speaker_encoder(x)[0]
    return xv.float().numpy()


def clone_xvector(tts: Any, audio: np.ndarray, sample_rate: int) -> np.ndarray:
    """The x-vector upstream's create_voice_clone_prompt(x_vector_only_mode=True)
    stores for a clip at any rate (librosa resampling to 24 kHz): float32 [D]."""
    pcm = np.asarray(audio, np.float32)
    with torch_threads(1):
        items = tts.create_voice_clone_prompt(
            ref_audio=(pcm, int(sample_rate)), x_vector_only_mode=True
        )
    return items[0].ref_spk_embedding.float().cpu().numpy()
