"""A reference clip's style: ``ge`` (after PReLU) and ``ge512``, on the NPU graphs
``sv`` and ``ref_enc`` (docs/gpt-sovits.md, reference audio; SoVITS decode, step 1;
speaker verification):

1. the peak-limited 32 kHz clip at 16 kHz (reference/audio.py ``sv_copy``:
   torchaudio's sinc resampler, as upstream), its Kaldi fbank -> ``sv`` -> the
   ERes2NetV2 embedding [1, sv_dim];
2. the 32 kHz clip's linear spectrogram, lowest 704 bins -> ``ref_enc`` with that
   embedding -> ge [1, gin, 1], ge512 [1, mrte, 1].

Both graphs are static: the clip's frames go first, zeros after, and a 0/1 mask
says which frames are real, so the result is the unpadded one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

import numpy as np

from daemon.engines.gptsovits.reference.audio import sv_copy
from daemon.engines.gptsovits.reference.params import ReferenceParams
from daemon.engines.gptsovits.reference.spectrogram import linear_spectrogram
from daemon.sdk.ar.bound import BoundGraph
from daemon.sdk.audio.fbank import FBANK_RATE, MEL_BINS, kaldi_fbank
from daemon.sdk.bundles.manifest import BundleError
from daemon.sdk.cancel import CancelToken

if TYPE_CHECKING:
    from daemon.sdk.graphs import Runner

#: SynthesizerTrn.decode (v2Pro): ref_enc reads refer[:, :704]
REF_BINS: Final = 704

Shapes = dict[str, tuple[int, ...]]


def sv_io(rp: ReferenceParams) -> Shapes:
    n = rp.fbank_frames
    return {"fbank": (1, n, MEL_BINS), "mask": (1, n), "emb": (1, rp.sv_dim)}


def ref_enc_io(rp: ReferenceParams, gin: int, mrte: int) -> Shapes:
    n = rp.spec_frames
    return {
        "spec": (1, REF_BINS, n),
        "mask": (1, 1, n),
        "sv": (1, rp.sv_dim),
        "ge": (1, gin, 1),
        "ge512": (1, mrte, 1),
    }


def style_widths(ref_enc: Runner) -> tuple[int, int]:
    """(gin, mrte) from the ``ref_enc`` graph's ``ge``/``ge512`` outputs."""
    shapes: Mapping[str, tuple[int, ...]] = {
        t.name: tuple(t.shape) for t in ref_enc.outputs
    }
    ge, ge512 = shapes.get("ge", ()), shapes.get("ge512", ())
    if len(ge) != 3 or len(ge512) != 3:
        raise BundleError(f"graph {ref_enc.key}: no 3-d 'ge' and 'ge512' outputs")
    return ge[1], ge512[1]


def _fill(buf: np.ndarray, rows: np.ndarray) -> None:
    """``rows`` [n, ...] into ``buf``'s first n entries (axis 0), zeros after."""
    n = len(rows)
    buf[:n] = rows
    buf[n:] = 0.0


class Style:
    """(ge, ge512) of a reference clip on the ``sv`` and ``ref_enc`` graphs."""

    def __init__(self, ref_enc: Runner, sv: Runner, rp: ReferenceParams) -> None:
        self.rp = rp
        self.gin, self.mrte = style_widths(ref_enc)
        self.ref = BoundGraph(ref_enc, ref_enc_io(rp, self.gin, self.mrte))
        self.sv = BoundGraph(sv, sv_io(rp))

    def embedding(
        self, audio16k: np.ndarray, cancel: CancelToken | None = None
    ) -> np.ndarray:
        """float32 [1, sv_dim] ERes2NetV2 embedding of a 16 kHz clip."""
        feats = kaldi_fbank(audio16k)
        if len(feats) > self.rp.fbank_frames:
            raise ValueError(
                f"the reference has {len(feats)} fbank frames "
                f"({len(audio16k) / FBANK_RATE:.2f} s); the sv graph takes "
                f"at most {self.rp.fbank_frames}"
            )
        b = self.sv.bind()
        _fill(b["fbank"][0], feats)
        _fill(b["mask"][0], np.ones(len(feats), np.float32))
        if cancel is not None:
            cancel.check()
        self.sv.execute()
        return np.array(b["emb"], np.float32)

    def style(
        self, spec: np.ndarray, emb: np.ndarray, cancel: CancelToken | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Linear spectrogram [1025, n] + embedding [1, sv_dim] -> (ge, ge512)."""
        n = spec.shape[1]
        if n > self.rp.spec_frames:
            raise ValueError(
                f"the reference has {n} spectrogram frames; the ref_enc graph "
                f"takes at most {self.rp.spec_frames}"
            )
        b = self.ref.bind()
        _fill(b["spec"][0].T, spec[:REF_BINS].T)
        _fill(b["mask"][0, 0], np.ones(n, np.float32))
        b["sv"][...] = emb
        if cancel is not None:
            cancel.check()
        self.ref.execute()
        return np.array(b["ge"], np.float32), np.array(b["ge512"], np.float32)

    def __call__(
        self, audio32k: np.ndarray, cancel: CancelToken | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(ge [1, gin, 1], ge512 [1, mrte, 1]) of a peak-limited 32 kHz clip."""
        emb = self.embedding(sv_copy(audio32k), cancel)
        return self.style(linear_spectrogram(audio32k), emb, cancel)
