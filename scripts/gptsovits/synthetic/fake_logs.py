"""The fake training folder of the synthetic voice (``logs/<exp>/``).

File formats follow upstream prepare_datasets/1-get-text.py, 2-get-hubert-wav32k.py,
2-get-sv.py and 3-get-semantic.py (see webui.py for the merged file names). 3-bert/
holds a real BERT's features (hidden_states[-3] repeated by word2ph), as
1-get-text.py computes them, so the pipeline can check its bert graph against them.
"""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import torch

# Worked examples of docs/gpt-sovits.md, Chinese text (symbols, word2ph, text).
CLIP_TEXTS = (
    ("n i2 h ao3 , sh ir4 j ie4 .", [2, 2, 1, 2, 2, 1], "你好,世界."),
    (
        "w o3 m en5 y i4 q i3 q v4 k an4 y i5 k an4 b a5 !",
        [2, 2, 2, 2, 2, 2, 2, 2, 2, 1],
        "我们一起去看一看吧!",
    ),
    (
        "x iao3 h ai2 EE er2 z ai4 w an2 EE er2 .",
        [2, 2, 2, 2, 2, 2, 1],
        "小孩儿在玩儿.",
    ),
)
CLIP_SECONDS = (4.0, 5.5, 3.5)  # inside the 3-10 s reference window
SAMPLE_RATE = 32000
# HuBERT: 16 kHz, 400-sample window, hop 320 -> 50 Hz; ssl_proj stride 2 -> 25 Hz.
HUBERT_SR, HUBERT_WIN, HUBERT_HOP = 16000, 400, 320
# Semantic codes 0..1023 (the SoVITS quantizer's 1024 bins).
CODEBOOK = 1024


def _write_wav(path: Path, seconds: float, rng: np.random.Generator) -> int:
    n = int(seconds * SAMPLE_RATE)
    t = np.arange(n) / SAMPLE_RATE
    pitch = 120 + 40 * np.sin(2 * np.pi * 0.7 * t)
    x = 0.3 * np.sin(2 * np.pi * np.cumsum(pitch) / SAMPLE_RATE)
    x += 0.02 * rng.standard_normal(n)
    with wave.open(str(path), "wb") as f:
        f.setnchannels(1)
        f.setsampwidth(2)
        f.setframerate(SAMPLE_RATE)
        f.writeframes((x * 32767).astype("<i2").tobytes())
    return n


def semantic_length(samples_32k: int) -> int:
    """Tokens 3-get-semantic.py extracts from a clip of that length."""
    frames_50hz = (samples_32k // 2 - HUBERT_WIN) // HUBERT_HOP + 1
    return frames_50hz // 2


def clip_name(exp: str, index: int) -> str:
    return f"{exp}_{index:04d}.wav"


def bert_features(bert_dir: Path, norm_text: str, word2ph: list[int]) -> torch.Tensor:
    """1-get-text.py get_bert_feature: hidden_states[-3] without [CLS]/[SEP],
    each char's row repeated word2ph times -> [dim, n_phones] (char tokens)."""
    from daemon.engines.gptsovits.frontend import CharVocab
    from scripts.gptsovits.export.bert import load_bert, reference_hidden

    vocab = CharVocab(bert_dir / "vocab.txt")
    ids = [vocab.cls, *vocab.encode(norm_text), vocab.sep]
    hidden = reference_hidden(load_bert(bert_dir), ids)[1:-1]
    return torch.from_numpy(np.repeat(hidden, word2ph, axis=0).T.copy())


def write_training_folder(
    logs: Path,
    rng: np.random.Generator,
    sv_dim: int,
    bert_dir: Path | None = None,
    bert_dim: int = 32,
) -> None:
    """The clips and their extracted data; 3-bert/ from the BERT in `bert_dir`
    (random features of width `bert_dim` without one)."""
    for sub in ("3-bert", "5-wav32k", "7-sv_cn"):
        (logs / sub).mkdir(parents=True, exist_ok=True)
    text_lines, sem_lines = [], ["item_name\tsemantic_audio"]
    for i, ((phones, word2ph, norm), secs) in enumerate(
        zip(CLIP_TEXTS, CLIP_SECONDS, strict=True)
    ):
        name = clip_name(logs.name, i)
        samples = _write_wav(logs / "5-wav32k" / name, secs, rng)
        n_phones = len(phones.split())
        if bert_dir is not None:
            bert = bert_features(bert_dir, norm, word2ph)
        else:
            bert = torch.from_numpy(rng.standard_normal((bert_dim, n_phones)))
        torch.save(bert.half(), logs / "3-bert" / f"{name}.pt")
        sv = torch.from_numpy(rng.standard_normal((1, sv_dim)).astype(np.float32))
        torch.save(sv, logs / "7-sv_cn" / f"{name}.pt")
        codes = rng.integers(0, CODEBOOK, semantic_length(samples))
        text_lines.append(f"{name}\t{phones}\t{word2ph}\t{norm}")
        sem_lines.append(f"{name}\t{' '.join(map(str, codes))}")
    (logs / "2-name2text.txt").write_text("\n".join(text_lines) + "\n", encoding="utf8")
    (logs / "6-name2semantic.tsv").write_text(
        "\n".join(sem_lines) + "\n", encoding="utf8"
    )
