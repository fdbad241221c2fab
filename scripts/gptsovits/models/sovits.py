"""SoVITS v2Pro synthesizer (upstream module/models.py SynthesizerTrn, inference
parts) and the two exported graphs built from it.

- vits_enc: text encoder (enc_p with MRTE and ge512) + reverse flow. Inputs are
  the CPU-side codebook lookup (x2 upsampled) and phone embedding, 0/1 padding
  masks, ge/ge512 of the reference, pre-scaled prior noise, and the speed as an
  interpolation matrix over the frames with the mask of its output frames
  (daemon/engines/gptsovits/speed.py says why a matrix).
- vits_gen: HiFiGAN generator on one window of latent frames with a frame mask.

Sizes come from the checkpoint's HParams; the few sizes upstream hard-codes
(SSL width 768, MRTE width 512, SV width 20480, ref-encoder bins 704 / width 128,
1024 codebook bins) are read from the weight shapes, so the tiny test voice can
shrink them too. The ref encoder + SV projection (ge, ge512) run on the PC only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from scripts.gptsovits.models.checkpoints import (
    SOVITS_TRAINING_ONLY,
    HParams,
    SovitsCheckpoint,
    load_sovits_checkpoint,
    load_state_strict,
)
from scripts.gptsovits.models.flow import Flow
from scripts.gptsovits.models.ref_encoder import MelStyleEncoder
from scripts.gptsovits.models.vits_layers import MRTE, Encoder, Generator
from scripts.gptsovits.shapes import FRAMES_PER_TOKEN


@dataclass(frozen=True)
class SovitsDims:
    inter: int
    hidden: int
    filters: int
    heads: int
    layers: int
    kernel: int
    gin: int
    upsample_initial: int
    upsample_rates: tuple[int, ...]
    upsample_kernels: tuple[int, ...]
    rb_kernels: tuple[int, ...]
    rb_dilations: tuple[tuple[int, ...], ...]
    hop: int
    sample_rate: int
    phone_vocab: int
    ssl: int
    mrte: int
    sv: int
    ref_bins: int
    ref_hidden: int
    codebook: int

    @classmethod
    def from_hparams(cls, hps: HParams, **weight_sizes: int) -> SovitsDims:
        """Config sizes from `hps`; the sizes upstream hard-codes come as keyword
        arguments (phone_vocab, ssl, mrte, sv, ref_bins, ref_hidden, codebook)."""
        m, d = hps.model, hps.data
        if str(m.resblock) != "1" or m.semantic_frame_rate != "25hz":
            raise ValueError("only resblock '1' and 25hz semantic tokens are supported")
        dims = cls(
            inter=m.inter_channels,
            hidden=m.hidden_channels,
            filters=m.filter_channels,
            heads=m.n_heads,
            layers=m.n_layers,
            kernel=m.kernel_size,
            gin=m.gin_channels,
            upsample_initial=m.upsample_initial_channel,
            upsample_rates=tuple(m.upsample_rates),
            upsample_kernels=tuple(m.upsample_kernel_sizes),
            rb_kernels=tuple(m.resblock_kernel_sizes),
            rb_dilations=tuple(tuple(x) for x in m.resblock_dilation_sizes),
            hop=d.hop_length,
            sample_rate=d.sampling_rate,
            **weight_sizes,
        )
        if math.prod(dims.upsample_rates) != dims.hop:
            raise ValueError(f"upsample rates {dims.upsample_rates} != hop {dims.hop}")
        return dims

    @classmethod
    def from_checkpoint(cls, ckpt: SovitsCheckpoint) -> SovitsDims:
        w = ckpt.weights
        try:
            ref = w["ref_enc.spectral.0.fc.weight"].shape
            return cls.from_hparams(
                ckpt.config,
                phone_vocab=w["enc_p.text_embedding.weight"].shape[0],
                ssl=w["enc_p.ssl_proj.weight"].shape[1],
                mrte=w["enc_p.mrte.c_pre.weight"].shape[0],
                sv=w["sv_emb.weight"].shape[1],
                ref_bins=ref[1],
                ref_hidden=ref[0],
                codebook=w["quantizer.vq.layers.0._codebook.embed"].shape[0],
            )
        except (AttributeError, KeyError) as exc:
            raise ValueError(f"SoVITS config/weights lack {exc}") from exc


class TextEncoder(nn.Module):
    """models.TextEncoder with the codebook lookup and phone embedding on the CPU
    (no forward: ``hidden`` and ``stats`` are its two halves, VitsEnc stretches
    the frames for speed between them)."""

    def __init__(self, dims: SovitsDims) -> None:
        super().__init__()
        h = dims.hidden
        self.ssl_proj = nn.Conv1d(dims.ssl, h, 1)
        args = (h, dims.filters, dims.heads)
        self.encoder_ssl = Encoder(*args, dims.layers // 2, dims.kernel)
        self.encoder_text = Encoder(*args, dims.layers, dims.kernel)
        self.text_embedding = nn.Embedding(dims.phone_vocab, h)
        self.mrte = MRTE(h, dims.mrte)
        self.encoder2 = Encoder(*args, dims.layers // 2, dims.kernel)
        self.proj = nn.Conv1d(h, 2 * dims.inter, 1)

    def hidden(
        self,
        ssl: Tensor,
        y_mask: Tensor,
        text: Tensor,
        text_mask: Tensor,
        ge512: Tensor,
    ) -> Tensor:
        """Up to encoder2: where upstream stretches the frames for speed."""
        y = self.ssl_proj(ssl * y_mask) * y_mask
        y = self.encoder_ssl(y, y_mask)
        text = self.encoder_text(text * text_mask, text_mask)
        y = self.mrte(y, y_mask, text, text_mask, ge512)
        return self.encoder2(y * y_mask, y_mask)

    def stats(self, y: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        return (self.proj(y) * mask).chunk(2, dim=1)  # m, logs


class _Codebook(nn.Module):
    def __init__(self, bins: int, dim: int) -> None:
        super().__init__()
        self.register_buffer("inited", torch.ones(1))
        self.register_buffer("cluster_size", torch.zeros(bins))
        self.register_buffer("embed", torch.randn(bins, dim))
        self.register_buffer("embed_avg", torch.zeros(bins, dim))


class _Quantizer(nn.Module):
    """quantize.ResidualVectorQuantizer keys: quantizer.vq.layers.0._codebook.*"""

    def __init__(self, bins: int, dim: int) -> None:
        super().__init__()
        self.vq = nn.Module()
        self.vq.layers = nn.ModuleList([nn.Module()])
        self.vq.layers[0]._codebook = _Codebook(bins, dim)

    @property
    def embed(self) -> Tensor:
        return self.vq.layers[0]._codebook.embed


class SovitsModel(nn.Module):
    def __init__(self, dims: SovitsDims) -> None:
        super().__init__()
        self.dims = dims
        self.enc_p = TextEncoder(dims)
        self.dec = Generator(
            dims.inter,
            dims.gin,
            dims.upsample_initial,
            dims.upsample_rates,
            dims.upsample_kernels,
            dims.rb_kernels,
            dims.rb_dilations,
        )
        self.flow = Flow(dims.inter, dims.hidden, dims.gin)
        self.ref_enc = MelStyleEncoder(dims.ref_bins, dims.ref_hidden, dims.gin)
        self.ssl_proj = nn.Conv1d(dims.ssl, dims.ssl, 2, stride=2)  # extract_latent
        self.quantizer = _Quantizer(dims.codebook, dims.ssl)
        self.sv_emb = nn.Linear(dims.sv, dims.gin)
        self.ge_to512 = nn.Linear(dims.gin, dims.mrte)
        self.prelu = nn.PReLU(dims.gin)

    @classmethod
    def from_checkpoint(
        cls, ckpt: SovitsCheckpoint, source: str = "SoVITS checkpoint"
    ) -> SovitsModel:
        model = cls(SovitsDims.from_checkpoint(ckpt))
        load_state_strict(model, ckpt.weights, source, SOVITS_TRAINING_ONLY)
        return model.eval()

    @classmethod
    def load(cls, path: Path) -> SovitsModel:
        """The model of the SoVITS checkpoint at ``path``."""
        return cls.from_checkpoint(load_sovits_checkpoint(path), str(path))

    @torch.no_grad()
    def global_embedding(self, spec: Tensor, sv: Tensor) -> tuple[Tensor, Tensor]:
        """Linear spectrogram [1,F,T] + SV embedding [1,sv] -> ge [1,gin,1] and
        ge512 [1,mrte,1] (SynthesizerTrn.decode get_ge, v2Pro branch)."""
        ref = self.ref_enc(spec[:, : self.dims.ref_bins])
        ge = self.prelu(ref + self.sv_emb(sv).unsqueeze(-1))
        return ge, self.ge_to512(ge.transpose(1, 2)).transpose(1, 2)

    def latent(self, codes: Tensor) -> Tensor:
        """Semantic codes [N] -> quantized SSL features [1,ssl,2N] (25 -> 50 Hz)."""
        q = F.embedding(codes, self.quantizer.embed).T
        return q.repeat_interleave(FRAMES_PER_TOKEN, dim=1).unsqueeze(0)

    def phone_embedding(self, phones: Tensor) -> Tensor:
        return self.enc_p.text_embedding(phones).T.unsqueeze(0)


class VitsEnc(nn.Module):
    """Exported graph vits_enc: z = flow^-1(m + noise * exp(logs)) * z_mask,
    with m, logs from encoder2's output times ``stretch`` (speed.py).  Without
    ``stretch``/``z_mask`` it is the speed-1 graph (y_mask throughout)."""

    def __init__(self, model: SovitsModel) -> None:
        super().__init__()
        self.model = model

    def forward(
        self,
        ssl: Tensor,
        y_mask: Tensor,
        text: Tensor,
        text_mask: Tensor,
        ge512: Tensor,
        ge: Tensor,
        noise: Tensor,
        stretch: Tensor | None = None,
        z_mask: Tensor | None = None,
    ) -> Tensor:
        enc = self.model.enc_p
        y = enc.hidden(ssl, y_mask, text, text_mask, ge512)
        if stretch is not None:
            if z_mask is None:
                raise ValueError("stretch needs its z_mask")
            y, y_mask = torch.matmul(y, stretch), z_mask
        m, logs = enc.stats(y, y_mask)
        return self._flow(m, logs, noise, y_mask, ge)

    def upstream(
        self,
        ssl: Tensor,
        text: Tensor,
        ge512: Tensor,
        ge: Tensor,
        noise: Tensor,
        speed: float = 1.0,
    ) -> Tensor:
        """SynthesizerTrn.decode's enc_p + flow at the exact lengths (B = 1,
        all-ones masks): the gates' reference.  Speed the way upstream's
        models.TextEncoder.forward does it: at speed != 1 the encoder2 output
        is linearly interpolated to int(T / speed) + 1 frames and the mask
        resized by nearest.  ``noise`` (pre-scaled) has the stretched frame
        count."""
        enc = self.model.enc_p
        mask = torch.ones(1, 1, ssl.shape[-1])
        y = enc.hidden(ssl, mask, text, torch.ones(1, 1, text.shape[-1]), ge512)
        if speed != 1:
            y = F.interpolate(y, size=int(y.shape[-1] / speed) + 1, mode="linear")
            mask = F.interpolate(mask, size=y.shape[-1], mode="nearest")
        m, logs = enc.stats(y, mask)
        return self._flow(m, logs, noise, mask, ge)

    def _flow(
        self, m: Tensor, logs: Tensor, noise: Tensor, mask: Tensor, ge: Tensor
    ) -> Tensor:
        z_p = m + noise * torch.exp(logs)
        return self.model.flow.reverse(z_p, mask, ge) * mask


class VitsGen(nn.Module):
    """Exported graph vits_gen: audio of one window (mask: 1 = real frame)."""

    def __init__(self, model: SovitsModel) -> None:
        super().__init__()
        self.model = model

    def forward(self, z: Tensor, ge: Tensor, mask: Tensor) -> Tensor:
        return self.model.dec(z, ge, mask)
