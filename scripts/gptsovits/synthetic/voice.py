"""Synthetic GPT-SoVITS v2Pro voice for tests and the demo (library part).

Writes random-weight checkpoints in the upstream formats with tiny dims, laid out
like an upstream installation after training:

    <root>/GPT_weights_v2Pro/<exp>-e<N>.ckpt
    <root>/SoVITS_weights_v2Pro/<exp>_e<M>_s<steps>.pth
    <root>/logs/<exp>/2-name2text.txt, 3-bert/, 5-wav32k/, 6-name2semantic.tsv, 7-sv_cn/
    <root>/pretrained/chinese-roberta-wwm-ext-large/   tiny BERT (tiny_text.py)
    <root>/pretrained/G2PWModel/                       tiny g2pW (tiny_text.py)

File formats follow upstream prepare_datasets/1-get-text.py, 2-get-hubert-wav32k.py,
2-get-sv.py and 3-get-semantic.py (see webui.py for the merged file names). 3-bert/
holds the tiny BERT's real features (hidden_states[-3] repeated by word2ph), as
1-get-text.py computes them, so the pipeline can check its bert graph against them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

from scripts.gptsovits.models.checkpoints import (
    HParams,
    save_gpt_checkpoint,
    save_sovits_checkpoint,
)
from scripts.gptsovits.models.sovits import SovitsDims, SovitsModel
from scripts.gptsovits.models.t2s import T2SDims, T2SModel
from scripts.gptsovits.models.vits_layers import WNConv1d
from scripts.gptsovits.shapes import TINY
from scripts.gptsovits.synthetic import tiny_text
from scripts.gptsovits.synthetic.fake_logs import (  # noqa: F401  (re-exported for tests and tools)
    CLIP_SECONDS,
    CLIP_TEXTS,
    SAMPLE_RATE,
    clip_name,
    semantic_length,
    write_training_folder,
)

# Vocabularies stay upstream-sized (symbols2 has 732 phones; 1024 codes + EOS).
PHONE_VOCAB = 732
SEMANTIC_VOCAB = 1025
TINY_BERT_DIM = 32

# Upstream s1longer-v2.yaml (v2Pro GPT): 24 layers, 16 heads, 512 wide.
T2S_V2PRO = T2SDims(
    vocab=SEMANTIC_VOCAB,
    phone_vocab=PHONE_VOCAB,
    dim=512,
    heads=16,
    layers=24,
    eos=SEMANTIC_VOCAB - 1,
    bert_dim=1024,
)
#: the tiny voice's GPT: upstream's vocabularies and EOS, a small network
TINY_T2S = replace(T2S_V2PRO, dim=64, heads=4, layers=2, bert_dim=TINY_BERT_DIM)
# Distinct widths everywhere, so a swapped dimension cannot go unnoticed. The
# vocoder keeps HiFiGAN's structure (ConvTranspose stages multiplying to hop 640,
# ResBlock1 with a dilated conv) with as few full-rate ops as possible: the HTP
# simulator's time per window grows with the ops at 32 kHz.
TINY_SOVITS_MODEL = {
    "inter_channels": 32,
    "hidden_channels": 64,
    "filter_channels": 128,
    "n_heads": 2,
    "n_layers": 2,
    "gin_channels": 80,
    "upsample_initial_channel": 32,
    "upsample_rates": [10, 8, 8],
    "upsample_kernel_sizes": [20, 16, 16],
    "resblock_kernel_sizes": [3],
    "resblock_dilation_sizes": [[2]],
}
TINY_SSL, TINY_MRTE, TINY_SV, TINY_REF_HIDDEN = 48, 96, 160, 32
REF_BINS = 704  # upstream crops the 1025-bin spectrogram to its lowest 704 bins

# The shortest clip: its prompt fits the tiny prefill (shapes.TINY).
REF_CLIP_INDEX = 2
BERT_SUBDIR = "pretrained/chinese-roberta-wwm-ext-large"
G2PW_SUBDIR = "pretrained/G2PWModel"


@dataclass(frozen=True)
class SyntheticVoice:
    root: Path
    exp: str
    gpt_ckpt: Path
    sovits_pth: Path
    logs_dir: Path
    gpt_epoch: int
    sovits_epoch: int
    bert_dir: Path
    g2pw_dir: Path

    @property
    def ref_clip(self) -> str:
        return clip_name(self.exp, REF_CLIP_INDEX)


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


def voice_at(
    root: Path, exp: str = "tinyvoice", gpt_epoch: int = 2, sovits_epoch: int = 2
) -> SyntheticVoice:
    """The SyntheticVoice that `write_test_voice` wrote under `root`."""
    root = Path(root)
    (sovits,) = (root / "SoVITS_weights_v2Pro").glob(f"{exp}_e{sovits_epoch}_s*.pth")
    return SyntheticVoice(
        root,
        exp,
        root / "GPT_weights_v2Pro" / f"{exp}-e{gpt_epoch}.ckpt",
        sovits,
        root / "logs" / exp,
        gpt_epoch,
        sovits_epoch,
        root / BERT_SUBDIR,
        root / G2PW_SUBDIR,
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
    bert_dir = tiny_text.write_tiny_bert(
        root / BERT_SUBDIR, TINY_BERT_DIM, TINY.bert_layers, TINY.bert_tokens, seed
    )
    g2pw_dir = tiny_text.write_tiny_g2pw(root / G2PW_SUBDIR, seed)
    logs = root / "logs" / exp
    write_training_folder(
        logs, np.random.default_rng(seed), TINY_SV, bert_dir, TINY_BERT_DIM
    )
    return SyntheticVoice(
        root,
        exp,
        gpt_path,
        sovits_path,
        logs,
        gpt_epoch,
        sovits_epoch,
        bert_dir,
        g2pw_dir,
    )
