"""Reference-voice features from a GPT-SoVITS training folder (``logs/<exp>/``).

Everything that needs HuBERT or ERes2Net was already computed by upstream's
dataset preparation (the folder's files: sources.py). From these the PC computes
what the board needs per voice (refs/<voice>.npz): the prompt phones and their
BERT features exactly as the runtime frontend and bert graph produce them, the
prompt semantic tokens, and ge / ge512 (ref encoder on the clip's linear
spectrogram + the SV projection). Facts: docs/gpt-sovits.md, reference audio;
SoVITS decode.

Prompt semantic tokens: with ``--hubert DIR`` exactly as upstream's
TTS._set_prompt_semantic (``prompt_semantic: hubert``): librosa.load(clip,
sr=16000), + 9600 zeros, chinese-hubert-base, ssl_proj, nearest code. Without
it the training folder's 6-name2semantic tokens + 15 x the mute token stand in
(``prompt_semantic: approximate``; the engine warns at load).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import soundfile as sf
import torch

from daemon.engines.gptsovits import layout
from daemon.engines.gptsovits.frontend import CharVocab, Phonemes, TextFrontend
from daemon.engines.gptsovits.reference.params import MAX_REF_SECONDS, MIN_REF_SECONDS
from scripts.common.parity import rel_error
from scripts.gptsovits.export.ref_features import RefFeatures
from scripts.gptsovits.models.sovits import SovitsModel
from scripts.gptsovits.pipeline.prompt_semantic import hubert_prompt
from scripts.gptsovits.pipeline.sources import (
    BERT_DIR,
    NAME2SEMANTIC,
    NAME2TEXT,
    SV_DIR,
    WAV_DIR,
    TrainingFolderError,
    need,
    resolve_clip,
)
from scripts.gptsovits.shapes import SAMPLE_RATE
from scripts.gptsovits.verify.cpu import GateError

if TYPE_CHECKING:
    from transformers import HubertModel

log = logging.getLogger(__name__)

# Inference appends 0.6 s of zeros to the 16 kHz reference before HuBERT, i.e.
# 30 HuBERT frames = 15 semantic tokens of silence, which the training-time
# extraction lacks. TTS_Config.mute_tokens (486) is upstream's silence token.
PROMPT_SILENCE_TOKENS = 15
MUTE_TOKEN = 486
#: how a voice's prompt tokens were made (refs npz + manifest ``prompt_semantic``)
PROMPT_HUBERT, PROMPT_APPROXIMATE = layout.PROMPT_HUBERT, layout.PROMPT_APPROXIMATE
# spectrogram_torch: n_fft 2048, hop 640, Hann window 2048, reflect padding
# (n_fft - hop) / 2, center False, magnitude with +1e-8 inside the sqrt.
N_FFT, SPEC_HOP, SPEC_EPS = 2048, 640, 1e-8
# 3-bert/ is fp16 and may come from another BERT build (GPU, fp16): the runtime
# features must agree within this relative error, or --bert is the wrong model.
TRAINING_BERT_MAX_REL_ERR = 2e-2
# Sentence-final chars (TTS splits): a prompt not ending in one gets "。".
SPLITS = set("，。？！,.?!~:：—…")

BertFn = Callable[[list[int]], np.ndarray]  # token ids -> hidden [n_tokens, dim]


def _table(path: Path, columns: int, header: str | None = None) -> dict[str, list]:
    lines = need(path).read_text(encoding="utf-8").splitlines()
    if header is not None and lines and lines[0].startswith(header):
        lines = lines[1:]
    out = {}
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != columns:
            raise TrainingFolderError(
                f"{path}:{i}: expected {columns} tab-separated columns, "
                f"found {len(parts)}"
            )
        out[parts[0]] = parts[1:]
    return out


def linear_spectrogram(audio: np.ndarray) -> torch.Tensor:
    """spectrogram_torch of 32 kHz audio [n] -> [1, 1025, n // 640]."""
    y = torch.from_numpy(np.asarray(audio, np.float32))[None]
    pad = (N_FFT - SPEC_HOP) // 2
    y = torch.nn.functional.pad(y[:, None], (pad, pad), mode="reflect")[:, 0]
    spec = torch.stft(
        y,
        N_FFT,
        hop_length=SPEC_HOP,
        win_length=N_FFT,
        window=torch.hann_window(N_FFT),
        center=False,
        onesided=True,
        return_complex=True,
    )
    return torch.sqrt(spec.real**2 + spec.imag**2 + SPEC_EPS)


def read_clip(path: Path) -> np.ndarray:
    audio, sr = sf.read(str(path), dtype="float32", always_2d=True)
    if sr != SAMPLE_RATE:
        raise TrainingFolderError(f"{path}: {sr} Hz, expected {SAMPLE_RATE} Hz")
    audio = audio.mean(axis=1)
    peak = float(np.abs(audio).max(initial=0.0))
    if peak > 1.0:  # TTS._get_ref_spec peak limit
        audio = audio / min(2.0, peak)
    return audio


def phone_bert(
    phonemes: Phonemes, vocab: CharVocab, bert: BertFn, dim: int
) -> np.ndarray:
    """[n_phones, dim]: per zh char its hidden row repeated word2ph times
    ([CLS]/[SEP] dropped), zeros for other languages (upstream get_bert_inf)."""
    rows = []
    for part in phonemes.parts:
        if part.lang != "zh" or part.word2ph is None:
            rows.append(np.zeros((len(part.phones), dim), np.float32))
            continue
        ids = [vocab.cls, *vocab.encode(part.norm_text), vocab.sep]
        hidden = bert(ids)[1:-1]
        rows.append(np.repeat(hidden, part.word2ph, axis=0).astype(np.float32))
    return np.concatenate(rows) if rows else np.zeros((0, dim), np.float32)


def prompt_text(text: str) -> str:
    """TTS.run step 4: a prompt not ending in a sentence-final char gets "。"."""
    text = text.strip("\n")
    return text if text and text[-1] in SPLITS else text + "。"


def reference_features(
    logs: Path,
    clip: str,
    sovits: SovitsModel,
    frontend: TextFrontend,
    vocab: CharVocab,
    bert: BertFn,
    bert_dim: int,
    text: str | None = None,
    hubert: HubertModel | None = None,
) -> RefFeatures:
    """Features of clip `clip` of the training folder `logs`; the prompt tokens
    by upstream's HuBERT path when ``hubert`` is given."""
    clip = resolve_clip(logs, clip)
    texts = _table(logs / NAME2TEXT, 4)
    if clip not in texts:
        raise TrainingFolderError(f"{logs / NAME2TEXT}: no line for {clip!r}")
    # The runtime frontend's word2ph is authoritative; the folder's phones are
    # only compared.
    folder_phones, _word2ph, norm_text = texts[clip]
    semantic = _table(logs / NAME2SEMANTIC, 2, header="item_name")
    if clip not in semantic:
        raise TrainingFolderError(f"{logs / NAME2SEMANTIC}: no line for {clip!r}")
    audio = read_clip(logs / WAV_DIR / clip)
    seconds = len(audio) / SAMPLE_RATE
    if not MIN_REF_SECONDS <= seconds <= MAX_REF_SECONDS:
        raise TrainingFolderError(
            f"reference {clip}: {seconds:.2f} s is outside "
            f"{MIN_REF_SECONDS:g}-{MAX_REF_SECONDS:g} s"
        )
    tokens = np.array([int(t) for t in semantic[clip][0].split()], np.int32)
    if not len(tokens) or tokens.min() < 0 or tokens.max() >= sovits.dims.codebook:
        raise TrainingFolderError(f"{NAME2SEMANTIC}: bad tokens for {clip!r}")
    if hubert is not None:
        prompt = hubert_prompt(logs / WAV_DIR / clip, hubert, sovits)
        how = PROMPT_HUBERT
    else:
        silence = np.full(PROMPT_SILENCE_TOKENS, MUTE_TOKEN, np.int32)
        prompt, how = np.concatenate([tokens, silence]), PROMPT_APPROXIMATE
    sv = torch.load(need(logs / SV_DIR / f"{clip}.pt"), map_location="cpu")
    sv = torch.as_tensor(sv, dtype=torch.float32).reshape(1, -1)
    if sv.shape[1] != sovits.dims.sv:
        raise TrainingFolderError(
            f"{SV_DIR}/{clip}.pt: width {sv.shape[1]}, the SoVITS model expects "
            f"{sovits.dims.sv}"
        )
    ge, ge512 = sovits.global_embedding(linear_spectrogram(audio), sv)

    ref_text = prompt_text(text if text is not None else norm_text)
    phonemes = frontend.phonemize(ref_text)
    features = phone_bert(phonemes, vocab, bert, bert_dim)
    lang = "zh" if any(p.lang == "zh" for p in phonemes.parts) else "en"
    training_err = _check_training_bert(logs, clip, folder_phones, phonemes, features)
    if training_err is None:
        log.warning(
            "reference %s: runtime phones differ from %s (%s vs %s); using the "
            "runtime frontend's",
            clip,
            NAME2TEXT,
            " ".join(phonemes.phones),
            folder_phones,
        )
    return RefFeatures(
        name=clip,
        text=ref_text,
        lang=lang,
        phones=phonemes.phone_ids.astype(np.int32),
        bert=features,
        prompt=prompt,
        ge=ge[0].numpy().astype(np.float32),
        ge512=ge512[0].numpy().astype(np.float32),
        seconds=seconds,
        training_bert_rel_err=training_err,
        prompt_semantic=how,
    )


def _check_training_bert(
    logs: Path,
    clip: str,
    folder_phones: str,
    phonemes: Phonemes,
    features: np.ndarray,
) -> float | None:
    """Runtime BERT features vs 3-bert/ (upstream's own, from training), when the
    phones agree. Returns the relative error, None if not comparable."""
    if " ".join(phonemes.phones) != folder_phones:
        return None
    path = logs / BERT_DIR / f"{clip}.pt"
    if not path.exists():
        if phonemes.bert_mask.any():
            raise TrainingFolderError(f"training folder: missing {path}")
        return None
    stored = torch.load(path, map_location="cpu").float().numpy().T
    if stored.shape != features.shape:
        raise TrainingFolderError(
            f"{path}: shape {stored.shape[::-1]}, expected {features.shape[::-1]}"
        )
    err = rel_error(stored, features)
    if err > TRAINING_BERT_MAX_REL_ERR:
        raise GateError(
            f"bert: reference features vs {BERT_DIR}/{clip}.pt relative error "
            f"{err:.4g} fails the gate < {TRAINING_BERT_MAX_REL_ERR:g} "
            "(is --bert the model the voice was trained with?)"
        )
    return err
