"""The build input: a Hugging Face Qwen3-ASR directory, checked before any model
loads.

Laid out as Qwen/Qwen3-ASR-0.6B ships it: config.json, preprocessor_config.json,
generation_config.json, tokenizer_config.json, the tokenizer (tokenizer.json, or
vocab.json + merges.txt), a chat template (chat_template.jinja / .json, or
``chat_template`` in tokenizer_config.json) and the weights (model.safetensors,
or an index with its shards).  Only the keys the build uses are read, through
the project's typed reader (daemon/config/reader.py), so a missing or mistyped
key fails naming the file and the key; the other keys are upstream's business.
Code defaults are never relied on: they are wrong for the real checkpoints
(docs/qwen3.md, config values).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Final, Literal

import msgspec

from daemon.config.reader import invalid
from scripts.qwen3.common import hfdir

CONFIG: Final = "config.json"
PREPROCESSOR: Final = "preprocessor_config.json"
GENERATION: Final = "generation_config.json"
TOKENIZER_CONFIG: Final = "tokenizer_config.json"
TOKENIZER_JSON: Final = hfdir.TOKENIZER_JSON
TOKENIZER_BPE: Final = hfdir.TOKENIZER_BPE
CHAT_TEMPLATES: Final = ("chat_template.jinja", "chat_template.json")
WEIGHTS: Final = hfdir.WEIGHTS
WEIGHTS_INDEX: Final = hfdir.WEIGHTS_INDEX
#: read by the tokenizer when present (they change its added tokens)
OPTIONAL: Final = ("added_tokens.json", "special_tokens_map.json")
#: upstream hard-codes 100-frame conv chunks of 13 tokens
#: (modeling_qwen3_asr.py: _get_feat_extract_output_lengths), so 2 * n_window
#: must be 100 (docs/qwen3.md, tiny models: any other value fails inside upstream's
#: encoder)
CHUNK_FRAMES: Final = 100
#: the processor's feature-extractor rate (processing_qwen3_asr.py defaults)
SAMPLE_RATE: Final = 16000

Dim = Annotated[int, msgspec.Meta(gt=0)]
Index = Annotated[int, msgspec.Meta(ge=0)]


class ModelDirError(ValueError):
    """The model directory lacks a file or a key; the message names both."""


@dataclass(frozen=True)
class AudioConfig:
    """thinker_config.audio_config: the encoder's chunking and output width."""

    num_mel_bins: Dim
    n_window: Dim
    n_window_infer: Dim
    output_dim: Dim

    def __post_init__(self) -> None:
        if 2 * self.n_window != CHUNK_FRAMES:
            raise invalid(
                "n_window",
                f"{CHUNK_FRAMES // 2} (upstream's 100-frame chunks)",
                self.n_window,
            )
        if self.n_window_infer % CHUNK_FRAMES:
            raise invalid(
                "n_window_infer", f"a multiple of {CHUNK_FRAMES}", self.n_window_infer
            )

    @property
    def window_chunks(self) -> int:
        """Chunks per attention window: n_window_infer // (2 * n_window)."""
        return self.n_window_infer // CHUNK_FRAMES


@dataclass(frozen=True)
class TextConfig:
    """thinker_config.text_config: the Qwen3 decoder's widths and RoPE."""

    hidden_size: Dim
    num_hidden_layers: Dim
    num_attention_heads: Dim
    num_key_value_heads: Dim
    head_dim: Dim
    vocab_size: Dim
    rope_theta: Annotated[float, msgspec.Meta(gt=0)]
    #: M-RoPE (mrope_section, interleaved); upstream fails without it
    rope_scaling: dict[str, Any]
    tie_word_embeddings: bool = False


@dataclass(frozen=True)
class ThinkerConfig:
    audio_config: AudioConfig
    text_config: TextConfig
    #: where the model scatters the audio rows (get_placeholder_mask)
    audio_token_id: Index
    audio_start_token_id: Index

    def __post_init__(self) -> None:
        if self.audio_config.output_dim != self.text_config.hidden_size:
            raise invalid(
                "audio_config.output_dim",
                f"text_config.hidden_size {self.text_config.hidden_size}",
                self.audio_config.output_dim,
            )


@dataclass(frozen=True)
class ModelConfig:
    """config.json (the keys the build reads)."""

    model_type: Literal["qwen3_asr"]
    thinker_config: ThinkerConfig


@dataclass(frozen=True)
class FeatureConfig:
    """preprocessor_config.json: upstream's WhisperFeatureExtractor."""

    feature_extractor_type: Literal["WhisperFeatureExtractor"]
    feature_size: Dim
    n_fft: Dim
    hop_length: Dim
    sampling_rate: Literal[16000]


@dataclass(frozen=True)
class GenerationConfig:
    """generation_config.json: what upstream's transformers path decodes with."""

    eos_token_id: Index | tuple[Index, ...] | None = None
    #: upstream's transformers backend samples if the checkpoint says so; the
    #: engine decodes greedily by default (as upstream's vLLM backend)
    do_sample: bool = False


@dataclass(frozen=True)
class ModelDir:
    """A checked model directory: the keys read and every file the build reads."""

    root: Path
    config: ModelConfig
    features: FeatureConfig
    generation: GenerationConfig
    files: tuple[Path, ...]

    @property
    def audio(self) -> AudioConfig:
        return self.config.thinker_config.audio_config

    @property
    def text(self) -> TextConfig:
        return self.config.thinker_config.text_config


def read_model_dir(root: str | Path) -> ModelDir:
    """``root`` checked: ModelDirError naming the first missing file or key."""
    root = Path(root)
    if not root.is_dir():
        raise ModelDirError(f"{root}: not a directory (a Hugging Face model dir)")
    files = [
        _need(root, name)
        for name in (CONFIG, PREPROCESSOR, GENERATION, TOKENIZER_CONFIG)
    ]
    config = _read_json(root / CONFIG, ModelConfig)
    features = _read_json(root / PREPROCESSOR, FeatureConfig)
    if features.feature_size != config.thinker_config.audio_config.num_mel_bins:
        raise ModelDirError(
            f"{root / PREPROCESSOR}: feature_size: expected config.json's "
            f"num_mel_bins {config.thinker_config.audio_config.num_mel_bins}, "
            f"found {features.feature_size}"
        )
    generation = _read_json(root / GENERATION, GenerationConfig)
    files += _tokenizer_files(root) + _template_files(root) + _weight_files(root)
    files += [root / n for n in OPTIONAL if (root / n).is_file()]
    return ModelDir(root, config, features, generation, tuple(files))


def _need(root: Path, name: str) -> Path:
    return hfdir.need(root, name, "Qwen3-ASR model", ModelDirError)


def _tokenizer_files(root: Path) -> list[Path]:
    return hfdir.tokenizer_files(root, ModelDirError)


def _template_files(root: Path) -> list[Path]:
    found = [root / n for n in CHAT_TEMPLATES if (root / n).is_file()]
    if found:
        return found
    tok = json.loads((root / TOKENIZER_CONFIG).read_text(encoding="utf-8"))
    if isinstance(tok, dict) and tok.get("chat_template"):
        return []  # inside tokenizer_config.json, already read
    raise ModelDirError(
        f"{root}: no chat template: neither {' nor '.join(CHAT_TEMPLATES)} nor "
        f"chat_template in {TOKENIZER_CONFIG}"
    )


def _weight_files(root: Path) -> list[Path]:
    return hfdir.weight_files(root, ModelDirError)


def _read_json(path: Path, cls: type) -> Any:
    return hfdir.read_json(path, cls, ModelDirError)
