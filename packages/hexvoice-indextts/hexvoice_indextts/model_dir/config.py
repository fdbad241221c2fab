"""The shape of IndexTTS-2's ``config.yaml``, declared for hexvoice's typed
reader (``daemon.config.reader``): every key the released file has, with its
type, so a typo or a wrong type is refused with its path before any model
loads.

Keys the released file carries for training only (``dataset.*`` but
``bpe_model``, ``vocoder.type``, some ``s2mel.DiT`` keys) are declared too:
upstream never reads them, but a file that misspells one is not the released
layout.  ``gpt`` is passed whole to upstream's ``UnifiedVoice(**cfg.gpt)``, so
it takes exactly that constructor's keyword arguments, with its defaults.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

import msgspec

Pos = Annotated[int, msgspec.Meta(ge=1)]
NonNeg = Annotated[int, msgspec.Meta(ge=0)]
Rate = Annotated[float, msgspec.Meta(ge=0)]
RelPath = Annotated[str, msgspec.Meta(min_length=1)]


@dataclass(frozen=True)
class Conformer:
    """``gpt.condition_module`` / ``gpt.emo_condition_module``: upstream's
    ConformerEncoder and perceiver resampler widths."""

    output_size: Pos
    linear_units: Pos
    attention_heads: Pos
    num_blocks: Pos
    input_layer: Literal["conv2d2", "conv2d", "conv2d6", "conv2d8", "linear"]
    perceiver_mult: Pos


@dataclass(frozen=True)
class Gpt:
    """``UnifiedVoice``'s keyword arguments (``gpt/model_v2.py``), its defaults."""

    layers: Pos = 8
    model_dim: Pos = 512
    heads: Pos = 8
    max_text_tokens: Pos = 120
    max_mel_tokens: Pos = 250
    max_conditioning_inputs: Pos = 1
    mel_length_compression: Pos = 1024
    number_text_tokens: Pos = 256
    start_text_token: NonNeg = 0
    stop_text_token: NonNeg = 1
    number_mel_codes: Pos = 8194
    start_mel_token: NonNeg = 8192
    stop_mel_token: NonNeg = 8193
    train_solo_embeddings: bool = False
    use_mel_codes_as_input: bool = True
    checkpointing: bool = True
    types: Pos = 1
    condition_num_latent: Pos = 32
    condition_type: str = "perceiver"
    condition_module: Conformer | None = None
    emo_condition_module: Conformer | None = None


@dataclass(frozen=True)
class SemanticCodec:
    """``semantic_codec``: MaskGCT's RepCodec (``build_semantic_codec``)."""

    codebook_size: Pos
    hidden_size: Pos
    codebook_dim: Pos
    vocos_dim: Pos
    vocos_intermediate_dim: Pos
    vocos_num_layers: Pos


@dataclass(frozen=True)
class SpectParams:
    n_fft: Pos
    win_length: Pos
    hop_length: Pos
    n_mels: Pos
    fmin: Rate = 0
    #: upstream's test is ``fmax == "None"``: None then, else 8000 whatever it says
    fmax: Any = "None"


@dataclass(frozen=True)
class Preprocess:
    sr: Pos
    spect_params: SpectParams


@dataclass(frozen=True)
class StyleEncoder:
    dim: Pos


@dataclass(frozen=True)
class LengthRegulator:
    channels: Pos
    is_discrete: bool
    in_channels: Pos
    content_codebook_size: Pos
    sampling_ratios: list[Pos]
    vector_quantize: bool
    n_codebooks: Pos
    quantizer_dropout: Rate
    f0_condition: bool
    n_f0_bins: Pos


@dataclass(frozen=True)
class Dit:
    hidden_dim: Pos
    num_heads: Pos
    depth: Pos
    class_dropout_prob: Rate
    block_size: Pos
    in_channels: Pos
    style_condition: bool
    final_layer_type: Literal["wavenet", "mlp"]
    target: str
    content_dim: Pos
    content_codebook_size: Pos
    content_type: str
    f0_condition: bool
    n_f0_bins: Pos
    content_codebooks: Pos
    is_causal: bool
    long_skip_connection: bool
    zero_prompt_speech_token: bool
    time_as_token: bool
    style_as_token: bool
    uvit_skip_connection: bool
    add_resblock_in_transformer: bool


@dataclass(frozen=True)
class Wavenet:
    hidden_dim: Pos
    num_layers: Pos
    kernel_size: Pos
    dilation_rate: Pos
    p_dropout: Rate
    style_condition: bool


@dataclass(frozen=True)
class S2mel:
    """``s2mel``: the length regulator, the CFM DiT and its wavenet head."""

    preprocess_params: Preprocess
    dit_type: Literal["DiT"]
    reg_loss_type: str
    style_encoder: StyleEncoder
    length_regulator: LengthRegulator
    DiT: Dit
    wavenet: Wavenet


@dataclass(frozen=True)
class Dataset:
    """Training settings, but ``bpe_model`` (the text tokenizer's file)."""

    bpe_model: RelPath
    sample_rate: Pos | None = None
    squeeze: bool | None = None
    mel: dict[str, Any] | None = None


@dataclass(frozen=True)
class Vocoder:
    #: the BigVGAN hub id (``BigVGAN.from_pretrained(name)``)
    name: RelPath
    type: str = "bigvgan"


@dataclass(frozen=True)
class Config:
    """``config.yaml`` of an IndexTTS-2 model directory."""

    dataset: Dataset
    gpt: Gpt
    semantic_codec: SemanticCodec
    s2mel: S2mel
    gpt_checkpoint: RelPath
    w2v_stat: RelPath
    s2mel_checkpoint: RelPath
    emo_matrix: RelPath
    spk_matrix: RelPath
    emo_num: list[Pos]
    qwen_emo_path: RelPath
    vocoder: Vocoder
    version: float | None = None
