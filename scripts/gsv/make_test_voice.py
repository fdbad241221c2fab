"""Synthetic GPT-SoVITS v2Pro voice for tests and the demo (library part).

Writes random-weight checkpoints in the upstream formats with tiny dims, laid out
like an upstream installation after training:

    <root>/GPT_weights_v2Pro/<exp>-e<N>.ckpt
    <root>/SoVITS_weights_v2Pro/<exp>_e<M>_s<steps>.pth
    <root>/logs/<exp>/2-name2text.txt, 3-bert/, 5-wav32k/, 6-name2semantic.tsv, 7-sv_cn/

File formats follow upstream prepare_datasets/1-get-text.py, 2-get-hubert-wav32k.py,
2-get-sv.py and 3-get-semantic.py (see webui.py for the merged file names).

TODO(issue 3 item 8): a tiny BERT (hidden size TINY_BERT_DIM, BERT_LAYERS of
shapes.TINY) and a tiny g2pW ONNX model belong here too; until then 3-bert/ holds
random features of width TINY_BERT_DIM, which the T2S bert_proj already expects.
"""

from __future__ import annotations

import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .checkpoints import HParams, save_gpt_checkpoint, save_sovits_checkpoint
from .sovits import SovitsDims, SovitsModel
from .t2s import T2SDims, T2SModel
from .vits_layers import WNConv1d

# Vocabularies stay upstream-sized (symbols2 has 732 phones; 1024 codes + EOS).
PHONE_VOCAB = 732
SEMANTIC_VOCAB = 1025
TINY_BERT_DIM = 32

TINY_T2S = T2SDims(
    vocab=SEMANTIC_VOCAB,
    phone_vocab=PHONE_VOCAB,
    dim=64,
    heads=4,
    layers=2,
    eos=SEMANTIC_VOCAB - 1,
    bert_dim=TINY_BERT_DIM,
)
# Distinct widths everywhere, so a swapped dimension cannot go unnoticed.
TINY_SOVITS_MODEL = {
    "inter_channels": 32,
    "hidden_channels": 64,
    "filter_channels": 128,
    "n_heads": 2,
    "n_layers": 2,
    "gin_channels": 80,
    "upsample_initial_channel": 32,
}
TINY_SSL, TINY_MRTE, TINY_SV, TINY_REF_HIDDEN = 48, 96, 160, 32
REF_BINS = 704  # upstream crops the 1025-bin spectrogram to its lowest 704 bins

# Worked examples of shared/docs/gpt-sovits-v2pro.md 2.1 (symbols, word2ph, text).
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


@dataclass(frozen=True)
class SyntheticVoice:
    root: Path
    exp: str
    gpt_ckpt: Path
    sovits_pth: Path
    logs_dir: Path
    gpt_epoch: int
    sovits_epoch: int


def tiny_gpt_config() -> dict:
    """Same sections as upstream configs/s1longer-v2.yaml, tiny model dims."""
    d = TINY_T2S
    return {
        "train": {
            "seed": 1234,
            "epochs": 20,
            "batch_size": 8,
            "save_every_n_epoch": 1,
            "precision": "16-mixed",
            "gradient_clip": 1.0,
        },
        "optimizer": {
            "lr": 0.01,
            "lr_init": 1e-05,
            "lr_end": 0.0001,
            "warmup_steps": 2000,
            "decay_steps": 40000,
        },
        "data": {
            "max_eval_sample": 8,
            "max_sec": 54,
            "num_workers": 4,
            "pad_val": d.eos,
        },
        "model": {
            "vocab_size": d.vocab,
            "phoneme_vocab_size": d.phone_vocab,
            "embedding_dim": d.dim,
            "hidden_dim": d.dim,
            "head": d.heads,
            "linear_units": 4 * d.dim,
            "n_layer": d.layers,
            "dropout": 0,
            "EOS": d.eos,
            "random_bert": 0,
        },
        "inference": {"top_k": 15},
    }


def s2v2pro_hparams() -> HParams:
    """The inference-relevant sections of upstream configs/s2v2Pro.json."""
    return HParams(
        train={"segment_size": 20480},
        data={
            "max_wav_value": 32768.0,
            "sampling_rate": 32000,
            "filter_length": 2048,
            "hop_length": 640,
            "win_length": 2048,
            "n_mel_channels": 128,
            "n_speakers": 300,
        },
        model={
            "inter_channels": 192,
            "hidden_channels": 192,
            "filter_channels": 768,
            "n_heads": 2,
            "n_layers": 6,
            "kernel_size": 3,
            "p_dropout": 0.0,
            "resblock": "1",
            "resblock_kernel_sizes": [3, 7, 11],
            "resblock_dilation_sizes": [[1, 3, 5], [1, 3, 5], [1, 3, 5]],
            "upsample_rates": [10, 8, 2, 2, 2],
            "upsample_initial_channel": 512,
            "upsample_kernel_sizes": [16, 16, 8, 2, 2],
            "n_layers_q": 3,
            "use_spectral_norm": False,
            "gin_channels": 1024,
            "semantic_frame_rate": "25hz",
            "freeze_quantizer": True,
        },
    )


def tiny_sovits_hparams(exp: str) -> HParams:
    hps = s2v2pro_hparams()
    for key, value in TINY_SOVITS_MODEL.items():
        hps.model[key] = value
    hps.model.version, hps.name, hps.version = "v2Pro", exp, "v2Pro"
    hps.data.exp_dir = f"logs/{exp}"
    return hps


def tiny_sovits_dims(hps: HParams) -> SovitsDims:
    return SovitsDims.from_hparams(
        hps,
        phone_vocab=PHONE_VOCAB,
        ssl=TINY_SSL,
        mrte=TINY_MRTE,
        sv=TINY_SV,
        ref_bins=REF_BINS,
        ref_hidden=TINY_REF_HIDDEN,
        codebook=SEMANTIC_VOCAB - 1,
    )


def random_t2s(seed: int) -> T2SModel:
    torch.manual_seed(seed)
    model = T2SModel(TINY_T2S)
    with torch.no_grad():  # positions matter: make alphas differ from 1
        model.ar_text_position.alpha.fill_(0.8)
        model.ar_audio_position.alpha.fill_(1.2)
    return model.eval()


def random_sovits(hps: HParams, seed: int) -> SovitsModel:
    torch.manual_seed(seed)
    model = SovitsModel(tiny_sovits_dims(hps))
    with torch.no_grad():
        # Fan-in scaled weight-norm convs keep the random vocoder's output audible.
        for module in model.modules():
            if isinstance(module, WNConv1d):
                v = module.weight_v
                fan_in = v.shape[0 if module.transposed else 1] * v.shape[2]
                v.normal_(0.0, fan_in**-0.5)
                module.weight_g.copy_(v.norm(dim=(1, 2), keepdim=True))
                module.bias.normal_(0.0, 0.01)
        model.prelu.weight.fill_(0.25)
    return model.eval()


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


def write_training_folder(logs: Path, rng: np.random.Generator, sv_dim: int) -> None:
    for sub in ("3-bert", "5-wav32k", "7-sv_cn"):
        (logs / sub).mkdir(parents=True, exist_ok=True)
    text_lines, sem_lines = [], ["item_name\tsemantic_audio"]
    for i, ((phones, word2ph, norm), secs) in enumerate(
        zip(CLIP_TEXTS, CLIP_SECONDS, strict=True)
    ):
        name = f"{logs.name}_{i:04d}.wav"
        samples = _write_wav(logs / "5-wav32k" / name, secs, rng)
        n_phones = len(phones.split())
        bert = torch.from_numpy(rng.standard_normal((TINY_BERT_DIM, n_phones)))
        torch.save(bert.half(), logs / "3-bert" / f"{name}.pt")
        sv = torch.from_numpy(rng.standard_normal((1, sv_dim)).astype(np.float32))
        torch.save(sv, logs / "7-sv_cn" / f"{name}.pt")
        codes = rng.integers(0, SEMANTIC_VOCAB - 1, semantic_length(samples))
        text_lines.append(f"{name}\t{phones}\t{word2ph}\t{norm}")
        sem_lines.append(f"{name}\t{' '.join(map(str, codes))}")
    (logs / "2-name2text.txt").write_text("\n".join(text_lines) + "\n", encoding="utf8")
    (logs / "6-name2semantic.tsv").write_text(
        "\n".join(sem_lines) + "\n", encoding="utf8"
    )


def write_test_voice(
    root: Path,
    exp: str = "tinyvoice",
    seed: int = 0,
    gpt_epoch: int = 2,
    sovits_epoch: int = 2,
    sovits_steps: int = 16,
) -> SyntheticVoice:
    """Write the synthetic voice under `root`; returns where everything went."""
    root = Path(root)
    gpt_dir, sovits_dir = root / "GPT_weights_v2Pro", root / "SoVITS_weights_v2Pro"
    gpt_dir.mkdir(parents=True, exist_ok=True)
    sovits_dir.mkdir(parents=True, exist_ok=True)
    gpt_path = gpt_dir / f"{exp}-e{gpt_epoch}.ckpt"
    save_gpt_checkpoint(
        gpt_path, random_t2s(seed).state_dict(), tiny_gpt_config(), f"GPT-e{gpt_epoch}"
    )
    hps = tiny_sovits_hparams(exp)
    sovits_path = sovits_dir / f"{exp}_e{sovits_epoch}_s{sovits_steps}.pth"
    save_sovits_checkpoint(
        sovits_path,
        random_sovits(hps, seed + 1).state_dict(),
        hps,
        f"{sovits_epoch}epoch_{sovits_steps}iteration",
        "v2Pro",
    )
    logs = root / "logs" / exp
    write_training_folder(logs, np.random.default_rng(seed), TINY_SV)
    return SyntheticVoice(
        root, exp, gpt_path, sovits_path, logs, gpt_epoch, sovits_epoch
    )
