"""``build-gptsovits --aux-ref CLIP`` (repeatable): upstream's ``aux_ref_audio_paths``
at build time.  The voice keeps its main reference's prompt (phones, BERT,
semantic tokens); its style ``ge`` is averaged after PReLU over the main and
every aux reference, as SynthesizerTrn.decode's list-of-refer branch does, and
``ge512`` with it (daemon/engines/gptsovits/reference/aux.py mean_style).

Which clips they are is resolved before any work (sources.py resolve_aux_refs).
Per aux reference, what upstream's TTS._get_ref_spec + decode compute:

- a clip of the training folder (a name or path in ``5-wav32k/``): its 32 kHz
  audio, peak-limited like ``--ref``'s, and the speaker embedding upstream's
  dataset preparation stored in ``7-sv_cn/<clip>.pt`` (2-get-sv.py);
- any other audio file: resampled to 32 kHz and peak-limited, its 16 kHz copy
  through the Kaldi fbank and ERes2NetV2 of ``--sv CKPT`` (sv.py
  compute_embedding3); both copies by torchaudio's sinc resampler as upstream,
  the runtime's own (reference/audio.py spec_copy, sv_copy);
  without ``--sv`` such a clip is refused, naming the flag.

Then ge = PReLU(ref_enc(spec) + sv_emb(sv)) of each (SovitsModel.global_embedding).
Upstream bounds only the main reference's length (3-10 s); so does this.  The
step also measures what mean_style relies on: the mean of the per-clip ge512
against ``ge_to512`` of the mean ge (``aux_ge512_rel_err``, float rounding).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import numpy as np
import soundfile as sf
import torch

from daemon.engines.gptsovits.reference.audio import check_pcm, spec_copy, sv_copy
from daemon.engines.gptsovits.reference.aux import Style, mean_style
from daemon.sdk.audio.fbank import kaldi_fbank
from scripts.common.parity import rel_error
from scripts.gptsovits.export.ref_features import RefFeatures
from scripts.gptsovits.models.sovits import SovitsModel
from scripts.gptsovits.pipeline.refs import linear_spectrogram, read_clip
from scripts.gptsovits.pipeline.sources import (
    SV_DIR,
    WAV_DIR,
    AuxRef,
    TrainingFolderError,
)

#: ge_to512 is affine, so the mean of ge512 equals ge_to512(mean ge) up to
#: float32 rounding over a 1024-term dot product (measured 5e-7 at full width,
#: tests/daemon/engines/gptsovits/reference/test_aux.py); far above means a bug
AUX_GE512_MAX_REL_ERR: Final = 1e-5


def styles(
    logs: Path, refs: Sequence[AuxRef], sovits: SovitsModel, sv_ckpt: Path | None
) -> list[Style]:
    """(ge [1, gin, 1], ge512 [1, mrte, 1]) per aux reference."""
    sv_model = None
    out = []
    for ref in refs:
        if ref.clip is not None:
            audio = read_clip(logs / WAV_DIR / ref.clip)
            stored = torch.load(logs / SV_DIR / f"{ref.clip}.pt", map_location="cpu")
            sv = torch.as_tensor(stored, dtype=torch.float32).reshape(1, -1)
        else:
            if sv_model is None:
                from scripts.gptsovits.models.eres2net import load_sv_checkpoint

                sv_model = load_sv_checkpoint(sv_ckpt)
            audio, sv = _file(ref, sv_model)
        if sv.shape[1] != sovits.dims.sv:
            raise TrainingFolderError(
                f"--aux-ref {ref.arg}: speaker embedding width {sv.shape[1]}, "
                f"the SoVITS model expects {sovits.dims.sv}"
            )
        ge, ge512 = sovits.global_embedding(linear_spectrogram(audio), sv)
        out.append((ge.numpy().astype(np.float32), ge512.numpy().astype(np.float32)))
    return out


def _file(ref: AuxRef, sv_model: torch.nn.Module) -> tuple[np.ndarray, torch.Tensor]:
    """32 kHz peak-limited audio and the sv embedding [1, sv] of an audio file."""
    try:
        pcm, rate = sf.read(str(ref.path), dtype="float32", always_2d=True)
    except (RuntimeError, sf.LibsndfileError) as exc:
        raise TrainingFolderError(f"--aux-ref {ref.arg}: not audio: {exc}") from exc
    what = f"--aux-ref {ref.arg}"
    try:
        pcm = check_pcm(pcm.mean(axis=1), int(rate), what)
    except ValueError as exc:
        raise TrainingFolderError(str(exc)) from exc
    audio = spec_copy(pcm, int(rate))
    fbank = kaldi_fbank(sv_copy(audio))
    with torch.no_grad():
        sv = sv_model(torch.from_numpy(fbank)[None])
    return audio, sv


def with_aux(
    ref: RefFeatures, aux: Sequence[Style], sovits: SovitsModel
) -> tuple[RefFeatures, dict]:
    """``ref`` with ge/ge512 averaged over it and ``aux``, and what was
    measured; ValueError if the ge512 mean does not match ge_to512(mean ge)."""
    if not aux:
        return ref, {}
    ge, ge512 = mean_style([(ref.ge[None], ref.ge512[None]), *aux])
    with torch.no_grad():
        mean_ge = torch.from_numpy(ge)
        want = sovits.ge_to512(mean_ge.transpose(1, 2)).transpose(1, 2).numpy()
    err = rel_error(want, ge512)
    if err > AUX_GE512_MAX_REL_ERR:
        raise ValueError(
            f"aux references: mean of ge512 vs ge_to512(mean ge) relative error "
            f"{err:.3g} fails < {AUX_GE512_MAX_REL_ERR:g}"
        )
    out = dataclasses.replace(ref, ge=ge[0], ge512=ge512[0])
    return out, {"aux_refs": len(aux), "aux_ge512_rel_err": err}
