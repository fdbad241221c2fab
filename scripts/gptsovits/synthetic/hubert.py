"""A tiny chinese-hubert-base for tests: same architecture, tiny widths.

chinese-hubert-base (TencentGameMate, what GPT-SoVITS loads from
pretrained_models/chinese-hubert-base) is a transformers ``HubertModel`` with the
hubert-base layout: group-norm conv feature extractor (7 convs, strides 5,2,2,2,2,
2,2 = hop 320 at 16 kHz), post-LN encoder, a 128-tap grouped positional conv.
The tiny copy keeps every structural number (kernels, strides, positional conv
taps and groups, norms) and shrinks only the widths, so the masked wrapper
(scripts/gptsovits/models/hubert.py) meets the same edges as on the real model. Its
hidden width is the synthetic voice's ssl width (TINY_SSL), since SoVITS's
ssl_proj reads HuBERT's output.
"""

from __future__ import annotations

from pathlib import Path

import torch

from scripts.gptsovits.synthetic.voice import TINY_SSL

#: conv feature extractor channels (hubert-base: 512 x 7)
TINY_CONV_DIM = 32
TINY_LAYERS = 2
TINY_HEADS = 4  # TINY_SSL / 4 = 12-wide heads
TINY_FFN = 96


def tiny_hubert_config():  # -> transformers.HubertConfig
    from transformers import HubertConfig

    # HubertConfig's defaults are hubert-base's (the chinese model's layout);
    # only widths and depth change.
    return HubertConfig(
        hidden_size=TINY_SSL,
        num_hidden_layers=TINY_LAYERS,
        num_attention_heads=TINY_HEADS,
        intermediate_size=TINY_FFN,
        conv_dim=(TINY_CONV_DIM,) * 7,
        feat_extract_norm="group",
        do_stable_layer_norm=False,
        conv_bias=False,
    )


def write_tiny_hubert(out: Path, seed: int = 0) -> Path:
    """A save_pretrained directory of a random-weight tiny HubertModel at
    ``out`` (config.json + weights), loadable as upstream loads its HuBERT."""
    from transformers import HubertModel

    torch.manual_seed(seed)
    model = HubertModel(tiny_hubert_config()).eval()
    # Random init leaves GroupNorm/LayerNorm affine at 1/0 and the positional
    # conv's weight-norm gain uniform; perturb them so a wrong normalisation
    # or a dropped bias shows up in the parity tests.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name or "original0" in name or name.endswith("bias"):
                p.add_(0.1 * torch.randn_like(p))
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    return out


def fit_codebook(sovits, hubert, audio16k: torch.Tensor, noise: float = 0.05) -> None:
    """Replace the random SoVITS codebook by (noisy) ssl_proj frames of
    ``audio16k``, in place. A trained codebook sits on such features; a random
    one makes almost every frame pick the same few short entries, so token
    parity would test nothing."""
    with torch.no_grad():
        hidden = hubert(audio16k[None])["last_hidden_state"].transpose(1, 2)
        frames = sovits.ssl_proj(hidden)[0].T  # [T25, ssl]
        embed = sovits.quantizer.embed
        g = torch.Generator().manual_seed(0)
        pick = torch.randint(0, len(frames), (len(embed),), generator=g)
        spread = noise * frames.std()
        embed.copy_(frames[pick] + spread * torch.randn(embed.shape, generator=g))
