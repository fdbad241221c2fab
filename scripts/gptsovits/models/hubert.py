"""chinese-hubert-base on a fixed window, masked to equal the unpadded model.

Upstream (TTS._set_prompt_semantic, docs/gpt-sovits.md, reference audio) runs
transformers' ``HubertModel`` on exactly the reference + 9600 zeros. The NPU
needs one static length, so the clip is zero-padded to the window and every
place where padding would leak into the valid frames is masked:

- the first conv's GroupNorm (one group per channel) normalises over time, so
  its mean and variance are taken over the valid conv frames only;
- the other convs are unpadded and strided, so valid output frames (HF's
  ``_get_feat_extract_output_lengths`` of the clip) never see the padding;
- the positional conv (128 taps, zero padding 64) must see zeros past the end
  of the clip, as the unpadded model does: padded frames are zeroed first
  (HubertEncoder does the same for a padded batch);
- attention keys of padded frames get the additive MASK_VALUE.

The strided feature-extractor convs run as matmuls over blocks of ``stride``
frames (``BlockConv``): the HTP simulator computes a Conv1d over the 169600-sample
window wrongly from output frame 3584 on (cosine 0.52 vs onnxruntime), while the
same conv as two MatMuls is exact (cosine 0.9999999).

Then ``hidden[:, :, :valid]`` equals HF's ``last_hidden_state.transpose(1, 2)`` on the
unpadded clip. ``SslQuant`` is SynthesizerTrn.extract_latent (docs/gpt-sovits.md,
reference audio): ssl_proj Conv1d(k=2, stride=2) and the nearest codebook entry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import Tensor, nn

from scripts.gptsovits.shapes import MASK_VALUE

if TYPE_CHECKING:
    from transformers import HubertModel

    from scripts.gptsovits.models.sovits import SovitsModel


def conv_lengths(config, samples: int) -> list[int]:
    """Valid frames after each feature-extractor conv for ``samples`` inputs
    (HF ``_get_feat_extract_output_lengths``, one entry per conv)."""
    out, n = [], samples
    for k, s in zip(config.conv_kernel, config.conv_stride, strict=True):
        n = (n - k) // s + 1
        out.append(n)
    return out


def _check_layout(config) -> None:
    """Only the hubert-base layout has the masking above worked out."""
    wrong = []
    if config.feat_extract_norm != "group":
        wrong.append(f"feat_extract_norm={config.feat_extract_norm!r} (want 'group')")
    if config.do_stable_layer_norm:
        wrong.append("do_stable_layer_norm=True (want post-LN)")
    if getattr(config, "conv_pos_batch_norm", False):
        wrong.append("conv_pos_batch_norm=True (want weight norm)")
    if wrong:
        raise ValueError(
            "HuBERT config is not chinese-hubert-base's layout: " + "; ".join(wrong)
        )


class BlockConv(nn.Module):
    """Conv1d without bias or padding, kernel k and stride s, on channel-last
    x [1, T, Cin] -> [1, (T - k) // s + 1, Cout], as ceil(k / s) matmuls over
    the input cut into blocks of s frames (kernel zero-padded to whole blocks)."""

    def __init__(self, conv: nn.Conv1d) -> None:
        super().__init__()
        if conv.bias is not None or conv.padding[0] or conv.dilation[0] != 1:
            raise ValueError("BlockConv: only unpadded, undilated convs without bias")
        k, s = conv.kernel_size[0], conv.stride[0]
        self.kernel, self.stride = k, s
        self.blocks = -(-k // s)
        w = conv.weight.detach()  # [out, in, k]
        w = torch.nn.functional.pad(w, (0, self.blocks * s - k))
        # block j's weight [s * in, out]: row f * in + c is tap j * s + f, channel c
        taps = w.permute(2, 1, 0).reshape(self.blocks, s * w.shape[1], w.shape[0])
        self.register_buffer("taps", taps.contiguous())

    def forward(self, x: Tensor) -> Tensor:
        t = int(x.shape[1])  # static window: a constant in the exported graph
        out = (t - self.kernel) // self.stride + 1
        need = (out + self.blocks - 1) * self.stride
        if need <= t:
            x = x[:, :need]
        else:  # the extra frames meet only the kernel's zero padding
            x = torch.cat([x, x.new_zeros(1, need - t, int(x.shape[2]))], 1)
        b = x.reshape(1, need // self.stride, -1)
        y = b[:, :out] @ self.taps[0]
        for j in range(1, self.blocks):
            y = y + b[:, j : j + out] @ self.taps[j]
        return y


class MaskedHubert(nn.Module):
    """audio [1, S], conv_mask [1, 1, T0], frame_mask [1, 1, T] (0/1, valid
    first) -> hidden [1, hidden, T] (upstream's transposed last_hidden_state)."""

    def __init__(self, model: HubertModel) -> None:
        super().__init__()
        cfg = model.config
        _check_layout(cfg)
        fe = model.feature_extractor
        self.first = fe.conv_layers[0]
        self.first_conv = BlockConv(self.first.conv)
        self.convs = nn.ModuleList(BlockConv(c.conv) for c in fe.conv_layers[1:])
        self.acts = nn.ModuleList(c.activation for c in fe.conv_layers[1:])
        self.projection = model.feature_projection
        enc = model.encoder
        pos = enc.pos_conv_embed
        # The weight-norm parametrisation folded into a plain conv (its
        # ``weight`` is the computed g * v / ||v||).
        conv = pos.conv
        self.pos_conv = nn.Conv1d(
            conv.in_channels,
            conv.out_channels,
            conv.kernel_size[0],
            padding=conv.padding[0],
            groups=conv.groups,
        )
        with torch.no_grad():
            self.pos_conv.weight.copy_(conv.weight.detach())
            self.pos_conv.bias.copy_(conv.bias.detach())
        # HubertSamePadLayer: an even kernel yields one extra frame, dropped.
        self.pos_trim = pos.padding.num_pad_remove
        self.pos_act = pos.activation
        self.enc_norm = enc.layer_norm
        self.layers = enc.layers
        self.heads = cfg.num_attention_heads
        self.head_dim = cfg.hidden_size // cfg.num_attention_heads

    def _masked_group_norm(self, x: Tensor, mask: Tensor) -> Tensor:
        """GroupNorm(C groups) of channel-last x [1, T0, C] over the valid
        frames only (mask [1, T0, 1]). Means of masked products over all T0
        frames, rescaled by the valid fraction: the reductions an unmasked
        GroupNorm uses, so fp16 sums stay bounded."""
        gn = self.first.layer_norm
        frac = mask.mean(1, keepdim=True)
        mean = (x * mask).mean(1, keepdim=True) / frac
        dev = (x - mean) * mask
        var = (dev * dev).mean(1, keepdim=True) / frac
        y = (x - mean) / torch.sqrt(var + gn.eps)
        return y * gn.weight + gn.bias

    def _attention(self, layer: nn.Module, h: Tensor, bias: Tensor) -> Tensor:
        att = layer.attention
        b, t, d = h.shape

        def heads(x: Tensor) -> Tensor:
            return x.view(b, t, self.heads, self.head_dim).transpose(1, 2)

        q = heads(att.q_proj(h)) * self.head_dim**-0.5
        k, v = heads(att.k_proj(h)), heads(att.v_proj(h))
        w = torch.softmax(q @ k.transpose(2, 3) + bias, dim=-1)
        return att.out_proj((w @ v).transpose(1, 2).reshape(b, t, d))

    def forward(self, audio: Tensor, conv_mask: Tensor, frame_mask: Tensor) -> Tensor:
        x = self.first_conv(audio[..., None])  # channel-last from here on
        x = self.first.activation(self._masked_group_norm(x, conv_mask.transpose(1, 2)))
        for conv, act in zip(self.convs, self.acts, strict=True):
            x = act(conv(x))
        h = self.projection(x)
        h = h * frame_mask.transpose(1, 2)
        pos = self.pos_conv(h.transpose(1, 2))
        if self.pos_trim:
            pos = pos[..., : -self.pos_trim]
        h = self.enc_norm(h + self.pos_act(pos).transpose(1, 2))
        bias = ((1.0 - frame_mask) * MASK_VALUE)[:, None]  # [1, 1, 1, T]
        for layer in self.layers:  # HubertEncoderLayer: post-LN
            h = layer.layer_norm(h + self._attention(layer, h, bias))
            h = layer.final_layer_norm(h + layer.feed_forward(h))
        return h.transpose(1, 2)


class SslQuant(nn.Module):
    """ssl [1, ssl, T] -> ssl_proj -> ``proj`` [1, ssl, T // 2], or with
    ``codes=True`` the nearest codebook index [1, T // 2] int32.

    Nearest by squared L2 (EuclideanCodebook.quantize: argmax of -||x - e||²);
    ||x||² is the same for every entry, so argmax(x·e - ||e||²/2) picks it.
    """

    def __init__(self, sovits: SovitsModel, codes: bool) -> None:
        super().__init__()
        self.proj = sovits.ssl_proj
        self.codes = codes
        embed = sovits.quantizer.embed.detach().float()
        self.register_buffer("embed_t", embed.T.contiguous())
        self.register_buffer("half_sq", 0.5 * (embed * embed).sum(1))

    def forward(self, ssl: Tensor) -> Tensor:
        x = self.proj(ssl)
        if not self.codes:
            return x
        scores = x.transpose(1, 2) @ self.embed_t - self.half_sq
        return scores.argmax(-1).to(torch.int32)


@torch.no_grad()
def reference_tokens(
    hubert: HubertModel, sovits: SovitsModel, audio16k: Tensor
) -> Tensor:
    """Upstream's prompt tokens [n] int64 of audio16k [n] (zeros already
    appended): HubertModel on the unpadded clip, then extract_latent."""
    hidden = hubert(audio16k[None].float())["last_hidden_state"].transpose(1, 2)
    return reference_codes(sovits, hidden)


def reference_codes(sovits: SovitsModel, hidden: Tensor) -> Tensor:
    """extract_latent of HuBERT features [1, ssl, T] -> codes [T // 2] int64,
    with upstream's squared distance (quantize.EuclideanCodebook)."""
    x = sovits.ssl_proj(hidden)[0].T  # [T25, ssl]
    embed = sovits.quantizer.embed
    dist = -(
        x.pow(2).sum(1, keepdim=True) - 2 * x @ embed.T + embed.pow(2).sum(1)[None]
    )
    return dist.max(-1).indices
