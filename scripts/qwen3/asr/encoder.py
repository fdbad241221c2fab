"""The Qwen3-ASR audio encoder on one attention window, as a static graph.

Upstream `Qwen3ASRAudioEncoder.forward` (docs/qwen3.md, ASR encoder windows) cuts the
mel into 100-frame chunks, runs the conv stem per chunk, adds per-chunk positions
0..12, and (in its FA2/vLLM backends) attends inside windows of C chunks. One
call of this graph is one such window: C chunks in, C·13 tokens out, with the
stem, the layers, `ln_post`, `proj1`, the activation and `proj2` reusing the
upstream modules (and so their weights).

Padding, as upstream sees it:
- a tail chunk of an utterance ≥ 100 frames is zero-padded to 100 frames by
  upstream itself (`pad_sequence`): zero mel columns, stem masks all ones;
- an utterance < 100 frames is not padded at all, so its conv padding reads
  zeros right after the valid frames. `stem_mask1`/`stem_mask2` zero the conv1
  and conv2 output frames past the valid length (after the GELU), which makes
  the next conv see exactly those zeros;
- `key_mask` blocks the padding tokens as keys (0 valid, MASK_VALUE padding);
  the outputs of padding tokens are garbage the CPU drops.

The engine fills these inputs (daemon/engines/qwen3/asr/encoder.py
`WindowEncoder`); the gates run that code on this graph.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

#: mel frames per chunk and tokens per full chunk: upstream hard-codes both
#: (`_get_feat_extract_output_lengths`: `% 100`, `* 13`)
CHUNK_FRAMES = 100
CHUNK_TOKENS = 13
#: conv1 and conv2 output frames of a full chunk (k3, s2, p1: 100 → 50 → 25)
STEM1_FRAMES = 50
STEM2_FRAMES = 25


@dataclass(frozen=True)
class EncoderDims:
    """Static sizes of the window graph, from the audio config."""

    chunks: int  # C = n_window_infer // (2 n_window)
    mels: int  # M = num_mel_bins
    d_model: int
    out_dim: int  # D = output_dim (= the text hidden size)

    @property
    def tokens(self) -> int:
        """W = C·13 tokens per window."""
        return self.chunks * CHUNK_TOKENS

    @classmethod
    def of(cls, audio_tower: nn.Module) -> EncoderDims:
        cfg = audio_tower.config
        if 2 * cfg.n_window != CHUNK_FRAMES:
            # docs/qwen3.md, tiny models: other n_window values break upstream's own
            # length formula.
            raise ValueError(
                f"n_window {cfg.n_window}: upstream needs 2·n_window = 100"
            )
        if cfg.n_window_infer % CHUNK_FRAMES:
            raise ValueError(
                f"n_window_infer {cfg.n_window_infer}: not a multiple of 100"
            )
        return cls(
            chunks=cfg.n_window_infer // CHUNK_FRAMES,
            mels=cfg.num_mel_bins,
            d_model=cfg.d_model,
            out_dim=cfg.output_dim,
        )


class EncoderWindow(nn.Module):
    """Graph `encoder`: mel [C,1,M,100], stem_mask1 [C,1,1,50], stem_mask2
    [C,1,1,25], key_mask [1,1,1,W] → audio [W,D]."""

    def __init__(self, audio_tower: nn.Module) -> None:
        super().__init__()
        self.dims = EncoderDims.of(audio_tower)
        t = audio_tower
        self.conv1, self.conv2, self.conv3 = t.conv2d1, t.conv2d2, t.conv2d3
        self.conv_out = t.conv_out
        self.layers = t.layers
        self.ln_post, self.proj1, self.act, self.proj2 = (
            t.ln_post,
            t.proj1,
            t.act,
            t.proj2,
        )
        # Per-chunk positions 0..12 (upstream slices its table the same way).
        pos = t.positional_embedding.positional_embedding[:CHUNK_TOKENS]
        self.register_buffer("positions", pos.detach().clone(), persistent=False)

    def forward(
        self, mel: Tensor, stem_mask1: Tensor, stem_mask2: Tensor, key_mask: Tensor
    ) -> Tensor:
        x = F.gelu(self.conv1(mel)) * stem_mask1
        x = F.gelu(self.conv2(x)) * stem_mask2
        x = F.gelu(self.conv3(x))
        c, ch, freq, t = x.shape
        x = self.conv_out(x.permute(0, 3, 1, 2).reshape(c, t, ch * freq))
        x = (x + self.positions).reshape(c * t, -1)
        for layer in self.layers:
            x = _layer(layer, x, key_mask[0])
        return self.proj2(self.act(self.proj1(self.ln_post(x))))


def _layer(layer: nn.Module, x: Tensor, key_mask: Tensor) -> Tensor:
    """Upstream `Qwen3ASRAudioEncoderLayer` on [W, d], attention over the window
    (bidirectional, padding keys blocked by the additive key_mask [1,1,W])."""
    h = _attention(layer.self_attn, layer.self_attn_layer_norm(x), key_mask)
    x = x + h
    h = layer.fc2(layer.activation_fn(layer.fc1(layer.final_layer_norm(x))))
    return x + h


def _attention(attn: nn.Module, x: Tensor, key_mask: Tensor) -> Tensor:
    w, heads = x.shape[0], attn.num_heads
    q = attn.q_proj(x).reshape(w, heads, -1).transpose(0, 1)
    k = attn.k_proj(x).reshape(w, heads, -1).transpose(0, 1)
    v = attn.v_proj(x).reshape(w, heads, -1).transpose(0, 1)
    scores = torch.matmul(q, k.transpose(-1, -2)) * attn.scaling + key_mask
    out = torch.matmul(torch.softmax(scores, dim=-1), v)
    return attn.out_proj(out.transpose(0, 1).reshape(w, -1))


def window_args(dims: EncoderDims) -> tuple[Tensor, ...]:
    """Example inputs of the window graph (names: INPUTS)."""
    c = dims.chunks
    return (
        torch.zeros(c, 1, dims.mels, CHUNK_FRAMES),
        torch.ones(c, 1, 1, STEM1_FRAMES),
        torch.ones(c, 1, 1, STEM2_FRAMES),
        torch.zeros(1, 1, 1, dims.tokens),
    )


INPUTS = ("mel", "stem_mask1", "stem_mask2", "key_mask")
OUTPUTS = ("audio",)
