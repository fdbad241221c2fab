"""Every resampling in the daemon: a whole clip or a stream at another rate.

One clip (:func:`resample`), by the resampler of the upstream the engine must
equal (``res_type``):

- ``SOXR_HQ``: librosa 0.11's default, which upstream GPT-SoVITS
  (``librosa.load(sr=...)``), Qwen3-TTS (``create_voice_clone_prompt``) and
  Qwen3-ASR (``normalize_audio_input``) use: soxr at HQ quality, then
  ``fix_length`` to ceil(n * (target / rate)) samples;
- ``TORCHAUDIO_SINC``: ``torchaudio.transforms.Resample`` at its defaults,
  which upstream GPT-SoVITS uses for its reference spectrogram and speaker
  embedding (its arithmetic in numpy: ``sinc.py``).

A stream (:class:`Resampler`): ``soxr.ResampleStream`` at HQ gives exactly the
one-shot samples (measured max |diff| 0.0 at 8 k-192 kHz in 333- to
4000-sample chunks, tests/daemon/sdk/audio/test_resample.py); with ``fix`` its
last push pads or cuts to librosa's length too, so a streamed utterance equals
:func:`resample` of the whole.  Without ``fix`` the stream ends where soxr's
flush ends (the output edge, ``shaping.output_resampler``).
"""

from __future__ import annotations

from typing import Final

import numpy as np

from daemon.sdk.audio.sinc import HANN, sinc_resample

#: librosa.resample's default res_type in librosa 0.11
SOXR_HQ: Final = "soxr_hq"
#: torchaudio.transforms.Resample's default resampling_method
TORCHAUDIO_SINC: Final = HANN
#: the soxr quality librosa's "soxr_hq" names
SOXR_QUALITY: Final = "HQ"


def librosa_length(n: int, rate: int, target: int) -> int:
    """Samples ``librosa.resample(fix=True)`` returns for ``n`` at ``rate``:
    ceil(n * ratio) with the ratio rounded first, as librosa computes it (at
    rates whose ratio is not exact, a sample more than the exact ceiling where
    n * target / rate is an integer, e.g. 8525 Hz -> 16 kHz)."""
    return int(np.ceil(n * (target / rate)))


def _fixed(y: np.ndarray, n: int) -> np.ndarray:
    """``y`` cut or zero-padded to ``n`` samples (librosa ``fix_length``)."""
    if len(y) >= n:
        return y[:n]
    return np.concatenate([y, np.zeros(n - len(y), np.float32)])


def resample(
    pcm: np.ndarray, rate: int, target: int, res_type: str = SOXR_HQ
) -> np.ndarray:
    """float32 ``pcm`` [n] at ``target`` Hz as ``res_type``'s upstream makes
    it: ``SOXR_HQ`` as ``librosa.resample(res_type="soxr_hq")``,
    ``TORCHAUDIO_SINC`` as ``torchaudio.transforms.Resample(rate, target)``
    of a float32 tensor.  At the same rate, the samples as they are (no copy
    when already contiguous float32)."""
    if res_type == TORCHAUDIO_SINC:
        return sinc_resample(pcm, rate, target)
    if res_type != SOXR_HQ:
        raise ValueError(
            f"resample: res_type {res_type!r}, expected {SOXR_HQ} or {TORCHAUDIO_SINC}"
        )
    x = np.asarray(pcm, np.float32)
    if rate == target:
        return np.ascontiguousarray(x)
    import soxr  # only a clip's registration resamples: keep it off the load path

    y = soxr.resample(x, rate, target, quality=SOXR_QUALITY)
    return np.ascontiguousarray(_fixed(y, librosa_length(len(x), rate, target)))


class Resampler:
    """A mono float32 stream at ``rate`` to ``target`` Hz by soxr HQ: chunk
    boundaries leave no seams, the samples are the one-shot's; ``fix``: the
    last push ends the stream at librosa's length (:func:`resample`'s)."""

    def __init__(self, rate: int, target: int, *, fix: bool = True) -> None:
        if rate <= 0 or target <= 0:
            raise ValueError(
                f"resample: rates must be positive, got {rate} -> {target}"
            )
        self.rate, self.target, self.fix = rate, target, fix
        self._stream = None
        if rate != target:  # upstream resamples only other rates
            import soxr

            self._stream = soxr.ResampleStream(
                rate, target, 1, dtype="float32", quality=SOXR_QUALITY
            )
        self._fed = 0  # input samples
        self._made = 0  # output samples

    def push(self, audio: np.ndarray, last: bool = False) -> np.ndarray:
        """The ``target`` Hz samples ``audio`` made ready (``last``: and the tail)."""
        x = np.asarray(audio, np.float32)
        self._fed += len(x)
        out = x if self._stream is None else self._stream.resample_chunk(x, last=last)
        if last and self.fix:
            want = librosa_length(self._fed, self.rate, self.target)
            out = _fixed(out, max(0, want - self._made))
        self._made += len(out)
        return np.asarray(out, np.float32)

    def finish(self) -> np.ndarray:
        """The tail: what the last samples pushed still hold back."""
        return self.push(np.zeros(0, np.float32), last=True)
