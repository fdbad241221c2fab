"""The checkpoint's configs as the Qwen3-TTS build reads them: config.json
(talker, code predictor, speaker encoder, every special id), its
generation_config.json and the codec's config.json, each key typed and
checked (daemon/config/reader.py), so a missing or mistyped key fails naming
the file and the key.  Every special id, speaker and language comes from
config.json: upstream's code defaults (e.g. codec_eos_token_id 4198) are wrong
for the real checkpoints (docs/qwen3.md, TTS special ids; the ncnn port found
4198 where the checkpoint says 2150), so none is ever relied on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal

import msgspec

from daemon.config.reader import invalid

#: upstream suppresses the top 1024 talker ids except EOS (modeling_qwen3_tts.py
#: generate: suppress_tokens), so the codes sit below them (docs/qwen3.md, tiny models)
SPECIAL_ROWS: Final = 1024

Dim = Annotated[int, msgspec.Meta(gt=0)]
Index = Annotated[int, msgspec.Meta(ge=0)]
Positive = Annotated[float, msgspec.Meta(gt=0)]
Share = Annotated[float, msgspec.Meta(gt=0, le=1)]


@dataclass(frozen=True)
class PredictorConfig:
    """talker_config.code_predictor_config (its class defaults, e.g. 32 code
    groups and head_dim 128, are not the checkpoint's: every key is read)."""

    vocab_size: Dim
    hidden_size: Dim
    num_hidden_layers: Dim
    num_attention_heads: Dim
    num_key_value_heads: Dim
    head_dim: Dim
    rope_theta: Positive
    num_code_groups: Literal[16]
    rope_scaling: dict[str, Any] | None = None


@dataclass(frozen=True)
class TalkerConfig:
    """talker_config: widths, RoPE, the text side and every special id."""

    vocab_size: Dim
    hidden_size: Dim
    num_hidden_layers: Dim
    num_attention_heads: Dim
    num_key_value_heads: Dim
    rope_theta: Positive
    #: M-RoPE (mrope_section, interleaved); upstream's forward needs it
    rope_scaling: dict[str, Any]
    num_code_groups: Literal[16]
    text_hidden_size: Dim
    text_vocab_size: Dim
    code_predictor_config: PredictorConfig
    codec_pad_id: Index
    codec_bos_id: Index
    codec_eos_token_id: Index
    codec_think_id: Index
    codec_nothink_id: Index
    codec_think_bos_id: Index
    codec_think_eos_id: Index
    #: name -> codec row of the speaker (CustomVoice); {} for Base
    spk_id: dict[str, Index]
    #: name -> false, or the codec_language_id key of its dialect
    spk_is_dialect: dict[str, str | bool]
    #: language name -> codec row ("auto" is implied: no language row)
    codec_language_id: dict[str, Index]
    #: upstream: getattr(config, "head_dim", hidden_size // num_attention_heads)
    head_dim: Dim | None = None

    def __post_init__(self) -> None:
        if self.vocab_size <= SPECIAL_ROWS:
            raise invalid(
                "vocab_size",
                f"> {SPECIAL_ROWS} (the codes sit below the special ids)",
                self.vocab_size,
            )
        low = self.vocab_size - SPECIAL_ROWS
        for name, value in self.special_ids().items():
            if not low <= value < self.vocab_size:
                raise invalid(
                    name,
                    f"an id in [{low}, {self.vocab_size}) (the top "
                    f"{SPECIAL_ROWS} of vocab_size)",
                    value,
                )
        for key in ("mrope_section", "interleaved"):
            if key not in self.rope_scaling:
                raise invalid(
                    f"rope_scaling.{key}",
                    "a value (upstream's M-RoPE reads it)",
                    None,
                    raw=True,
                )
        for name, value in self.spk_id.items():
            if not 0 <= value < self.vocab_size:
                raise invalid(f"spk_id.{name}", f"an id below {self.vocab_size}", value)
            if name not in self.spk_is_dialect:
                raise invalid(
                    f"spk_is_dialect.{name}",
                    "false or a dialect (upstream looks it up)",
                    None,
                    raw=True,
                )
        languages = self.codec_language_id
        for name, dialect in self.spk_is_dialect.items():
            if dialect is True or (dialect is not False and dialect not in languages):
                raise invalid(
                    f"spk_is_dialect.{name}",
                    f"false or a key of codec_language_id {sorted(languages)}",
                    dialect,
                )
        for name, value in self.codec_language_id.items():
            if not 0 <= value < self.vocab_size:
                raise invalid(
                    f"codec_language_id.{name}", f"an id below {self.vocab_size}", value
                )

    def special_ids(self) -> dict[str, int]:
        return {
            "codec_pad_id": self.codec_pad_id,
            "codec_bos_id": self.codec_bos_id,
            "codec_eos_token_id": self.codec_eos_token_id,
            "codec_think_id": self.codec_think_id,
            "codec_nothink_id": self.codec_nothink_id,
            "codec_think_bos_id": self.codec_think_bos_id,
            "codec_think_eos_id": self.codec_think_eos_id,
        }

    @property
    def head_size(self) -> int:
        return self.head_dim or self.hidden_size // self.num_attention_heads


@dataclass(frozen=True)
class SpeakerEncoderConfig:
    """speaker_encoder_config (Base): the x-vector's mel and width."""

    mel_dim: Dim
    enc_dim: Dim
    sample_rate: Literal[24000]


@dataclass(frozen=True)
class ModelConfig:
    """config.json (the keys the build reads)."""

    model_type: Literal["qwen3_tts"]
    tts_model_type: Literal["custom_voice", "base"]
    tokenizer_type: Literal["qwen3_tts_tokenizer_12hz"]
    tts_model_size: str
    im_start_token_id: Index
    im_end_token_id: Index
    tts_pad_token_id: Index
    tts_bos_token_id: Index
    tts_eos_token_id: Index
    talker_config: TalkerConfig
    speaker_encoder_config: SpeakerEncoderConfig | None = None

    def __post_init__(self) -> None:
        vocab = self.talker_config.text_vocab_size
        for name, value in self.text_ids().items():
            if value >= vocab:
                raise invalid(
                    name, f"an id below talker_config.text_vocab_size {vocab}", value
                )
        if self.tts_model_type == "base":
            enc = self.speaker_encoder_config
            if enc is None:
                raise invalid(
                    "speaker_encoder_config",
                    "the speaker encoder of a base checkpoint",
                    None,
                    raw=True,
                )
            if enc.enc_dim != self.talker_config.hidden_size:
                raise invalid(
                    "speaker_encoder_config.enc_dim",
                    f"talker_config.hidden_size {self.talker_config.hidden_size} "
                    "(the x-vector is a talker row)",
                    enc.enc_dim,
                )

    def text_ids(self) -> dict[str, int]:
        return {
            "im_start_token_id": self.im_start_token_id,
            "im_end_token_id": self.im_end_token_id,
            "tts_pad_token_id": self.tts_pad_token_id,
            "tts_bos_token_id": self.tts_bos_token_id,
            "tts_eos_token_id": self.tts_eos_token_id,
        }


@dataclass(frozen=True)
class GenerationConfig:
    """generation_config.json: upstream's generate defaults
    (Qwen3TTSModel._merge_generate_kwargs merges them over its hard defaults;
    a key absent here takes upstream's hard default at build time)."""

    do_sample: bool | None = None
    top_k: Index | None = None
    top_p: Share | None = None
    temperature: Positive | None = None
    repetition_penalty: Positive | None = None
    subtalker_dosample: bool | None = None
    subtalker_top_k: Index | None = None
    subtalker_top_p: Share | None = None
    subtalker_temperature: Positive | None = None
    max_new_tokens: Dim | None = None

    def given(self) -> dict[str, Any]:
        """The keys the file sets."""
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class DecoderConfig:
    """the codec config.json's decoder_config (the keys the build uses)."""

    codebook_size: Dim
    codebook_dim: Dim
    num_quantizers: Literal[16]
    upsample_rates: tuple[Dim, ...]
    upsampling_ratios: tuple[Dim, ...]
    sliding_window: Dim


@dataclass(frozen=True)
class CodecConfig:
    """speech_tokenizer/config.json."""

    model_type: Literal["qwen3_tts_tokenizer_12hz"]
    output_sample_rate: Literal[24000]
    decode_upsample_rate: Literal[1920]
    decoder_config: DecoderConfig

    def __post_init__(self) -> None:
        d = self.decoder_config
        total = 1
        for r in (*d.upsample_rates, *d.upsampling_ratios):
            total *= r
        if total != self.decode_upsample_rate:
            raise invalid(
                "decoder_config.upsample_rates",
                "rates whose product with "
                f"upsampling_ratios is decode_upsample_rate "
                f"{self.decode_upsample_rate}",
                total,
            )
