"""The build input: a Hugging Face Qwen3-TTS 12 Hz directory and its codec
directory, checked before any model loads.

Laid out as Qwen/Qwen3-TTS-12Hz-0.6B-CustomVoice / -Base ship them:
config.json, generation_config.json, tokenizer_config.json, the tokenizer
(tokenizer.json, or vocab.json + merges.txt: converted at build time), the
weights, and ``speech_tokenizer/`` (the codec: config.json, model.safetensors,
preprocessor_config.json; ``--codec`` names another copy).  Only the keys the
build uses are read, through the typed reader, so a missing or mistyped key
fails naming the file and the key.  Every special id, speaker and language
comes from config.json: upstream's code defaults (e.g. codec_eos_token_id 4198)
are wrong for the real checkpoints (docs/qwen3.md, TTS special ids; the ncnn port
found 4198 where the checkpoint says 2150), so none is ever relied on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Final, Literal

import msgspec

from daemon.config.reader import invalid
from scripts.qwen3.common import hfdir

CONFIG: Final = "config.json"
GENERATION: Final = "generation_config.json"
TOKENIZER_CONFIG: Final = "tokenizer_config.json"
PREPROCESSOR: Final = "preprocessor_config.json"
#: read by the tokenizer / processor when present
OPTIONAL: Final = ("added_tokens.json", "special_tokens_map.json", PREPROCESSOR)
CODEC_DIR: Final = "speech_tokenizer"
KIND: Final = "Qwen3-TTS 12 Hz model"
CODEC_KIND: Final = "Qwen3-TTS 12 Hz codec (speech_tokenizer)"
#: the 12 Hz codec: 16 codebooks a frame (talker + 15 predictor steps)
GROUPS: Final = 16
#: upstream suppresses the top 1024 talker ids except EOS (modeling_qwen3_tts.py
#: generate: suppress_tokens), so the codes sit below them (docs/qwen3.md, tiny models)
SPECIAL_ROWS: Final = 1024
SAMPLE_RATE: Final = 24000
SAMPLES_PER_FRAME: Final = 1920

Dim = Annotated[int, msgspec.Meta(gt=0)]
Index = Annotated[int, msgspec.Meta(ge=0)]
Positive = Annotated[float, msgspec.Meta(gt=0)]


class ModelDirError(ValueError):
    """A directory lacks a file or a key; the message names both."""


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
            raise invalid("vocab_size", f"> {SPECIAL_ROWS} (the codes sit below "
                          "the special ids)", self.vocab_size)  # fmt: skip
        low = self.vocab_size - SPECIAL_ROWS
        for name, value in self.special_ids().items():
            if not low <= value < self.vocab_size:
                raise invalid(name, f"an id in [{low}, {self.vocab_size}) (the top "
                              f"{SPECIAL_ROWS} of vocab_size)", value)  # fmt: skip
        for key in ("mrope_section", "interleaved"):
            if key not in self.rope_scaling:
                raise invalid(f"rope_scaling.{key}", "a value (upstream's M-RoPE "
                              "reads it)", None, raw=True)  # fmt: skip
        for name, value in self.spk_id.items():
            if not 0 <= value < self.vocab_size:
                raise invalid(f"spk_id.{name}", f"an id below {self.vocab_size}", value)
            if name not in self.spk_is_dialect:
                raise invalid(f"spk_is_dialect.{name}", "false or a dialect "
                              "(upstream looks it up)", None, raw=True)  # fmt: skip
        for name, dialect in self.spk_is_dialect.items():
            if dialect is True or (
                dialect is not False and dialect not in self.codec_language_id
            ):
                raise invalid(f"spk_is_dialect.{name}", "false or a key of "
                              f"codec_language_id {sorted(self.codec_language_id)}",
                              dialect)  # fmt: skip
        for name, value in self.codec_language_id.items():
            if not 0 <= value < self.vocab_size:
                raise invalid(f"codec_language_id.{name}",
                              f"an id below {self.vocab_size}", value)  # fmt: skip

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
                raise invalid(name, f"an id below talker_config.text_vocab_size "
                              f"{vocab}", value)  # fmt: skip
        if self.tts_model_type == "base":
            enc = self.speaker_encoder_config
            if enc is None:
                raise invalid("speaker_encoder_config", "the speaker encoder of a "
                              "base checkpoint", None, raw=True)  # fmt: skip
            if enc.enc_dim != self.talker_config.hidden_size:
                raise invalid("speaker_encoder_config.enc_dim", "talker_config."
                              f"hidden_size {self.talker_config.hidden_size} (the "
                              "x-vector is a talker row)", enc.enc_dim)  # fmt: skip

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
    top_p: Annotated[float, msgspec.Meta(gt=0, le=1)] | None = None
    temperature: Positive | None = None
    repetition_penalty: Positive | None = None
    subtalker_dosample: bool | None = None
    subtalker_top_k: Index | None = None
    subtalker_top_p: Annotated[float, msgspec.Meta(gt=0, le=1)] | None = None
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
            raise invalid("decoder_config.upsample_rates", "rates whose product with "
                          f"upsampling_ratios is decode_upsample_rate "
                          f"{self.decode_upsample_rate}", total)  # fmt: skip


@dataclass(frozen=True)
class ModelDir:
    """A checked model + codec directory pair and every file the build reads."""

    root: Path
    codec_root: Path
    config: ModelConfig
    generation: GenerationConfig
    codec: CodecConfig
    files: tuple[Path, ...]
    codec_files: tuple[Path, ...] = field(default=())

    @property
    def kind(self) -> str:
        return self.config.tts_model_type

    @property
    def talker(self) -> TalkerConfig:
        return self.config.talker_config

    @property
    def predictor(self) -> PredictorConfig:
        return self.config.talker_config.code_predictor_config

    @property
    def all_files(self) -> tuple[Path, ...]:
        return self.files + self.codec_files


def read_model_dir(root: str | Path, codec: str | Path | None = None) -> ModelDir:
    """``root`` (and ``codec``, default ``root/speech_tokenizer``) checked:
    ModelDirError naming the first missing file or key."""
    root = Path(root)
    if not root.is_dir():
        raise ModelDirError(f"{root}: not a directory (a Hugging Face model dir)")
    codec_root = Path(codec) if codec is not None else root / CODEC_DIR
    if not codec_root.is_dir():
        raise ModelDirError(f"{codec_root}: not a directory (the codec: "
                            f"{root.name}/{CODEC_DIR}, or --codec DIR)")  # fmt: skip
    err = ModelDirError
    files = [hfdir.need(root, n, KIND, err) for n in (CONFIG, GENERATION,
                                                      TOKENIZER_CONFIG)]  # fmt: skip
    config = hfdir.read_json(root / CONFIG, ModelConfig, err)
    generation = hfdir.read_json(root / GENERATION, GenerationConfig, err)
    files += hfdir.tokenizer_files(root, err) + hfdir.weight_files(root, err)
    files += [root / n for n in OPTIONAL if (root / n).is_file()]
    codec_files = [hfdir.need(codec_root, n, CODEC_KIND, err)
                   for n in (CONFIG, PREPROCESSOR)]  # fmt: skip
    codec_cfg = hfdir.read_json(codec_root / CONFIG, CodecConfig, err)
    codec_files += hfdir.weight_files(codec_root, err)
    want = config.talker_config.code_predictor_config.vocab_size
    have = codec_cfg.decoder_config.codebook_size
    if want != have:
        raise ModelDirError(
            f"{codec_root / CONFIG}: decoder_config.codebook_size: expected "
            f"{root / CONFIG}'s code_predictor_config.vocab_size {want} (the codec "
            f"of this model), found {have}"
        )
    low = config.talker_config.vocab_size - SPECIAL_ROWS
    if have > low:
        raise ModelDirError(
            f"{root / CONFIG}: talker_config.vocab_size: expected at least the "
            f"codebook {have} + {SPECIAL_ROWS} special ids, found "
            f"{config.talker_config.vocab_size}"
        )
    return ModelDir(root, codec_root, config, generation, codec_cfg, tuple(files),
                    tuple(codec_files))  # fmt: skip
