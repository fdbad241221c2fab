"""A tiny random-weight IndexTTS-2: upstream's MODEL_DIR and the hub models it
fetches by id, built with upstream's own classes and saved in its formats.

``write_tiny(root, seed)`` writes ``root/model`` (what ``IndexTTS2(model_dir=)``
reads: config.yaml, gpt.pth, s2mel.pth, wav2vec2bert_stats.pt, feat1.pt,
feat2.pt, bpe.model, qwen0.6bemo4-merge/) and ``root/hf`` (an HF_HOME whose hub
cache holds facebook/w2v-bert-2.0, amphion/MaskGCT, funasr/campplus and
nvidia/bigvgan_v2_22khz_80band_256x), so upstream loads it with
HF_HUB_OFFLINE=1. Widths upstream hard-codes keep their real values (the
CONFIG comments and docs/upstream.md say where); the others are small and odd
where upstream allows. Each part draws from its own seed, so one part's change
leaves the others' bytes alone.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

# Real IndexTTS-2 values that upstream code hard-codes, so a tiny model keeps them.
from hexvoice_indextts.model_dir import GPT_WIDTH, MEL_BINS, STYLE_DIM, W2V_WIDTH
from hexvoice_indextts.tiny import hub as tiny_hub
from hexvoice_indextts.tiny import text as tiny_text

#: The DiT's width. Its wavenet final layer must be as wide: DiT.forward feeds
#: the DiT's timestep embedding to FinalLayer(wavenet.hidden_dim)
#: (s2mel/modules/diffusion_transformer.py; both are 512 in the real config).
DIT_WIDTH: Final = 40
#: The semantic codebook; the GPT's start/stop mel tokens sit just past it
#: (8192/8193 of 8194 in the real config).
CODEBOOK: Final = 53
#: The emotion matrices' row counts per emotion (real config: sums to 73).
EMO_NUM: Final = [3, 17, 2, 8, 4, 5, 10, 24]

#: config.yaml: the real file's keys and every value it shares with the real
#: model, except the sizes upstream lets a config choose.
CONFIG: Final[dict[str, Any]] = {
    "dataset": {
        "bpe_model": "bpe.model",
        "sample_rate": 24000,
        "squeeze": False,
        "mel": {
            "sample_rate": 24000,
            "n_fft": 1024,
            "hop_length": 256,
            "win_length": 1024,
            "n_mels": 100,
            "mel_fmin": 0,
            "normalize": False,
        },
    },
    "gpt": {
        "model_dim": GPT_WIDTH,
        "max_mel_tokens": 1815,
        "max_text_tokens": 600,
        "heads": 5,  # head width 256
        "use_mel_codes_as_input": True,
        "mel_length_compression": 1024,
        "layers": 1,
        "number_text_tokens": tiny_text.BPE_VOCAB,
        "number_mel_codes": CODEBOOK + 2,
        "start_mel_token": CODEBOOK,
        "stop_mel_token": CODEBOOK + 1,
        "start_text_token": 0,
        "stop_text_token": 1,
        "train_solo_embeddings": False,
        "condition_type": "conformer_perceiver",
        "condition_module": {
            "output_size": 36,
            "linear_units": 37,
            "attention_heads": 3,
            "num_blocks": 1,
            "input_layer": "conv2d2",
            "perceiver_mult": 1,
        },
        "emo_condition_module": {
            "output_size": 20,
            "linear_units": 19,
            "attention_heads": 5,
            "num_blocks": 1,
            "input_layer": "conv2d2",
            "perceiver_mult": 1,
        },
    },
    "semantic_codec": {
        "codebook_size": CODEBOOK,
        "hidden_size": W2V_WIDTH,
        "codebook_dim": 5,
        "vocos_dim": 21,
        "vocos_intermediate_dim": 37,
        "vocos_num_layers": 1,
    },
    "s2mel": {
        "preprocess_params": {
            "sr": 22050,
            "spect_params": {
                "n_fft": 1024,
                "win_length": 1024,
                "hop_length": 256,
                "n_mels": MEL_BINS,
                "fmin": 0,
                "fmax": "None",
            },
        },
        "dit_type": "DiT",
        "reg_loss_type": "l1",
        "style_encoder": {"dim": STYLE_DIM},
        "length_regulator": {
            "channels": 35,
            "is_discrete": False,
            "in_channels": W2V_WIDTH,
            "content_codebook_size": 29,
            "sampling_ratios": [1, 1, 1, 1],
            "vector_quantize": False,
            "n_codebooks": 1,
            "quantizer_dropout": 0.0,
            "f0_condition": False,
            "n_f0_bins": 512,
        },
        "DiT": {
            "hidden_dim": DIT_WIDTH,
            "num_heads": 5,  # head width 8 (rotary needs it even)
            "depth": 3,
            "class_dropout_prob": 0.1,
            "block_size": 8192,
            "in_channels": MEL_BINS,
            "style_condition": True,
            "final_layer_type": "wavenet",
            "target": "mel",
            "content_dim": 35,  # = length_regulator.channels
            "content_codebook_size": 29,
            "content_type": "discrete",
            "f0_condition": False,
            "n_f0_bins": 512,
            "content_codebooks": 1,
            "is_causal": False,
            "long_skip_connection": True,
            "zero_prompt_speech_token": False,
            "time_as_token": False,
            "style_as_token": False,
            "uvit_skip_connection": True,
            "add_resblock_in_transformer": False,
        },
        "wavenet": {
            "hidden_dim": DIT_WIDTH,
            "num_layers": 3,
            "kernel_size": 5,
            "dilation_rate": 1,
            "p_dropout": 0.2,
            "style_condition": True,
        },
    },
    "gpt_checkpoint": "gpt.pth",
    "w2v_stat": "wav2vec2bert_stats.pt",
    "s2mel_checkpoint": "s2mel.pth",
    "emo_matrix": "feat2.pt",
    "spk_matrix": "feat1.pt",
    "emo_num": EMO_NUM,
    "qwen_emo_path": "qwen0.6bemo4-merge/",
    "vocoder": {"type": "bigvgan", "name": tiny_hub.BIGVGAN_ID},
    "version": 2.0,
}

#: Per-part seed offsets: part k of seed s draws from torch.manual_seed(s * 97 + k).
_PARTS: Final = ("gpt", "s2mel", "stats", "matrices", "qwen", "hub")


@dataclass(frozen=True)
class TinyDirs:
    """Where write_tiny put things: IndexTTS2(model_dir=model) with HF_HOME=hf_home."""

    model: Path
    hf_home: Path


def part_seed(seed: int, part: str) -> int:
    return seed * 97 + _PARTS.index(part)


def tiny_config() -> dict[str, Any]:
    return copy.deepcopy(CONFIG)


def write_tiny(root: Path, seed: int = 0) -> TinyDirs:
    """Write the tiny MODEL_DIR and hub cache under ``root`` (created)."""
    import yaml
    from omegaconf import OmegaConf

    model = root / "model"
    model.mkdir(parents=True, exist_ok=True)
    cfg = tiny_config()
    (model / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    ocfg = OmegaConf.create(cfg)  # upstream reads config.yaml with OmegaConf
    _write_gpt(model / cfg["gpt_checkpoint"], ocfg, part_seed(seed, "gpt"))
    _write_s2mel(model / cfg["s2mel_checkpoint"], ocfg, part_seed(seed, "s2mel"))
    _write_stats(model / cfg["w2v_stat"], part_seed(seed, "stats"))
    _write_matrices(model, cfg, part_seed(seed, "matrices"))
    tiny_text.write_bpe(model / cfg["dataset"]["bpe_model"])
    tiny_text.write_qwen_emotion(model / cfg["qwen_emo_path"], part_seed(seed, "qwen"))
    hf_home = root / "hf"
    tiny_hub.write_hub(hf_home / "hub", ocfg, part_seed(seed, "hub"))
    return TinyDirs(model=model, hf_home=hf_home)


def _write_gpt(path: Path, cfg: Any, seed: int) -> None:
    """gpt.pth: UnifiedVoice's plain state dict (utils/checkpoint.load_checkpoint
    loads it strict)."""
    import torch
    from indextts.gpt.model_v2 import UnifiedVoice

    torch.manual_seed(seed)
    gpt = UnifiedVoice(**cfg.gpt)
    # A trained GPT never emits start_mel_token (it is one past the codebook:
    # the semantic codec's vq2emb would index out of range), so neither may
    # the tiny one: its logit bias is pushed far down.
    with torch.no_grad():
        gpt.mel_head.bias[cfg.gpt.start_mel_token] = -1e4
    torch.save(gpt.state_dict(), path)


def _write_s2mel(path: Path, cfg: Any, seed: int) -> None:
    """s2mel.pth: {"net": {module: state dict}}, what commons.load_checkpoint2 reads."""
    import torch
    from indextts.s2mel.modules.commons import MyModel

    torch.manual_seed(seed)
    s2mel = MyModel(cfg.s2mel, use_gpt_latent=True)
    net = {name: module.state_dict() for name, module in s2mel.models.items()}
    torch.save({"net": net}, path)


def _write_stats(path: Path, seed: int) -> None:
    """wav2vec2bert_stats.pt: per-channel mean and variance of w2v-BERT layer 17."""
    import torch

    g = torch.Generator().manual_seed(seed)
    mean = torch.randn(W2V_WIDTH, generator=g) * 0.1
    var = torch.rand(W2V_WIDTH, generator=g) * 0.5 + 0.75
    torch.save({"mean": mean, "var": var}, path)


def _write_matrices(model: Path, cfg: dict[str, Any], seed: int) -> None:
    """feat1.pt (speaker styles, STYLE_DIM wide) and feat2.pt (emotion vectors,
    GPT_WIDTH wide), one row per emo_num entry, as _load_emotion_matrices splits
    them."""
    import torch

    g = torch.Generator().manual_seed(seed)
    rows = sum(cfg["emo_num"])
    torch.save(torch.randn(rows, STYLE_DIM, generator=g), model / cfg["spk_matrix"])
    emo = torch.randn(rows, GPT_WIDTH, generator=g) * 0.02
    torch.save(emo, model / cfg["emo_matrix"])
