"""SoVITS decode on the NPU: ``vits_enc`` once per segment, then ``vits_gen`` windows.

Host side of docs/gpt-sovits.md, SoVITS decode (B = 1):
- codebook lookup of the semantic tokens, repeated x2 to the 50 Hz latent rate;
- VITS phone embedding of the segment's phones (target text only, no prompt);
- both padded into the static graph (FR frames x TT phones) with 0/1 masks;
- the speed as upstream's linear interpolation of encoder2's output to
  ``int(2N / speed) + 1`` frames, fed as a stretch matrix and its output mask
  (speed.py); bundles built before those inputs speak at speed 1 only;
- prior noise ``randn * noise_scale`` drawn from the request's generator for the
  real (stretched) frames only (padding stays zero, so the draw does not depend
  on FR);
- HiFiGAN over overlapped windows (daemon.sdk.audio.windows), each window's audio
  yielded as soon as it is computed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

import numpy as np

from daemon.engines.gptsovits import layout as L
from daemon.engines.gptsovits import speed
from daemon.engines.gptsovits.layout import GsvParams
from daemon.engines.gptsovits.t2s import CapacityError
from daemon.engines.gptsovits.tables import CpuTables, Reference
from daemon.sdk.ar.bound import BoundGraph
from daemon.sdk.audio.windows import decode_windowed
from daemon.sdk.bundles.manifest import BundleError
from daemon.sdk.cancel import CancelToken

if TYPE_CHECKING:
    from daemon.sdk.graphs import Runner

# 25 Hz semantic tokens -> 50 Hz latent frames (upstream decode: nearest x2).
FRAMES_PER_TOKEN = 2


class Vits:
    """``vits_enc`` + windowed ``vits_gen`` for one bundle."""

    def __init__(
        self, p: GsvParams, tables: CpuTables, graphs: Mapping[str, Runner]
    ) -> None:
        missing = [k for k in (L.VITS_ENC, L.VITS_GEN) if k not in graphs]
        if missing:
            raise BundleError(f"gpt-sovits bundle lacks graph(s) {missing}")
        if p.gen_window <= 2 * p.gen_overlap:
            raise BundleError(
                f"gen_window {p.gen_window} must exceed 2 x gen_overlap {p.gen_overlap}"
            )
        self.p, self.tables = p, tables
        widths = L.vits_widths(graphs)
        if widths is None:
            raise BundleError(f"graph {L.VITS_ENC}: no 3-d 'noise' and 'ge512' inputs")
        self.inter, self.mrte = widths
        enc_io = L.vits_enc_io(p, *widths)
        inputs = {t.name for t in graphs[L.VITS_ENC].inputs}
        #: the graph takes a stretch matrix (speed != 1 possible)
        self.speeds = {speed.STRETCH, speed.Z_MASK} <= inputs
        if self.speeds:
            enc_io.update(speed.speed_io(p.vits_frames))
        self.enc = BoundGraph(graphs[L.VITS_ENC], enc_io)
        self.gen = BoundGraph(graphs[L.VITS_GEN], L.vits_gen_io(p, self.inter))

    def check_reference(self, ref: Reference) -> None:
        if ref.ge512.shape != (1, self.mrte, 1):
            raise BundleError(
                f"reference {ref.name!r}: ge512 has {ref.ge512.shape[1]} channels, "
                f"the vits_enc graph takes {self.mrte}"
            )

    @property
    def max_tokens(self) -> int:
        return self.p.vits_frames // FRAMES_PER_TOKEN

    def max_tokens_at(self, sp: float) -> int:
        """Tokens per segment at speed ``sp``: slow speech stretches them to
        more frames than the graph's FR, so it gets fewer."""
        return speed.max_tokens(self.p.vits_frames, FRAMES_PER_TOKEN, sp)

    def check_speed(self, sp: float) -> None:
        if sp != 1 and not self.speeds:
            raise ValueError(
                f"speed {sp:g}: this bundle's {L.VITS_ENC} graph predates speed "
                f"(no {speed.STRETCH!r} input), so it speaks at speed 1.0 only; "
                "rebuild the voice with scripts/build-gptsovits to change speed"
            )

    def check_fits(self, n_phones: int, n_tokens: int, sp: float = 1.0) -> None:
        if n_phones > self.p.vits_phones:
            raise CapacityError(
                f"{n_phones} phones exceed the VITS encoder's {self.p.vits_phones}"
            )
        cap = self.max_tokens_at(sp)
        if n_tokens > cap:
            at = "" if sp == 1 else f" at speed {sp:g}"
            raise CapacityError(
                f"{n_tokens} tokens exceed the VITS encoder's {cap}{at} "
                f"({self.p.vits_frames} frames)"
            )

    def encode(
        self,
        tokens: np.ndarray,
        phones: np.ndarray,
        ref: Reference,
        rng: np.random.Generator,
        cancel: CancelToken | None = None,
        sp: float = 1.0,
    ) -> np.ndarray:
        """Latent z [inter, frames] of one segment: 2 * len(tokens) frames at
        speed 1, int(2 * len(tokens) / sp) + 1 otherwise (upstream's)."""
        n_tok, n_ph = len(tokens), len(phones)
        if n_tok == 0 or n_ph == 0:
            raise ValueError("VITS needs at least one token and one phone")
        self.check_speed(sp)
        self.check_fits(n_ph, n_tok, sp)
        frames = FRAMES_PER_TOKEN * n_tok
        out = speed.stretched_frames(frames, sp)
        # Noise first: the draw order (T2S tokens, then this) fixes the stream.
        noise = rng.standard_normal((self.inter, out), dtype=np.float32)
        b = self.enc.bind()
        if self.speeds:
            speed.fill_stretch(b[speed.STRETCH][0], frames, sp)
            _mask(b[speed.Z_MASK], out)
        t = self.tables
        ssl = b["ssl"][0]
        ssl[:, :frames] = np.repeat(t.codebook[tokens].T, FRAMES_PER_TOKEN, axis=1)
        ssl[:, frames:] = 0.0
        _mask(b["y_mask"], frames)
        text = b["text"][0]
        text[:, :n_ph] = t.vits_text_emb[phones].T
        text[:, n_ph:] = 0.0
        _mask(b["text_mask"], n_ph)
        b["ge"][...] = ref.ge
        b["ge512"][...] = ref.ge512
        nz = b["noise"][0]
        np.multiply(noise, np.float32(self.p.noise_scale), out=nz[:, :out])
        nz[:, out:] = 0.0
        if cancel is not None:
            cancel.check()
        self.enc.execute()
        return np.array(b["z"][0, :, :out], np.float32)

    def generate(
        self, z: np.ndarray, ref: Reference, cancel: CancelToken | None = None
    ) -> Iterator[np.ndarray]:
        """Audio of z [inter, n], one chunk per vocoder window, as each is done."""
        b = self.gen.bind()
        b["ge"][...] = ref.ge

        def window(frames: np.ndarray, mask: np.ndarray) -> np.ndarray:
            if cancel is not None:
                cancel.check()
            b["z"][0] = frames
            b["mask"][0, 0] = mask
            self.gen.execute()
            return b["audio"]

        for audio in decode_windowed(
            z, window, self.p.hop, self.p.gen_window, self.p.gen_overlap
        ):
            yield np.array(audio, np.float32)  # the bound buffer is reused

    def warmup(self, ref: Reference) -> None:
        rng = np.random.default_rng(0)
        z = self.encode(np.zeros(1, np.int64), np.zeros(1, np.int64), ref, rng)
        for _ in self.generate(z, ref):
            pass


def _mask(buf: np.ndarray, n: int) -> None:
    buf[..., :n] = 1.0
    buf[..., n:] = 0.0
