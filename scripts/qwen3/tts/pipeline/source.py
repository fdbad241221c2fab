"""The build input: a Hugging Face Qwen3-TTS 12 Hz directory and its codec
directory, checked before any model loads.

Laid out as Qwen/Qwen3-TTS-12Hz-0.6B-CustomVoice / -Base ship them:
config.json, generation_config.json, tokenizer_config.json, the tokenizer
(tokenizer.json, or vocab.json + merges.txt: converted at build time), the
weights, and ``speech_tokenizer/`` (the codec: config.json, model.safetensors,
preprocessor_config.json; ``--codec`` names another copy).  Only the keys the
build uses are read, through the typed configs (config.py), so a missing or
mistyped key fails naming the file and the key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from scripts.qwen3.common import hfdir
from scripts.qwen3.tts.pipeline.config import (
    SPECIAL_ROWS,
    CodecConfig,
    GenerationConfig,
    ModelConfig,
    PredictorConfig,
    TalkerConfig,
)

CONFIG: Final = "config.json"
GENERATION: Final = "generation_config.json"
TOKENIZER_CONFIG: Final = "tokenizer_config.json"
PREPROCESSOR: Final = "preprocessor_config.json"
#: read by the tokenizer / processor when present
OPTIONAL: Final = ("added_tokens.json", "special_tokens_map.json", PREPROCESSOR)
CODEC_DIR: Final = "speech_tokenizer"
KIND: Final = "Qwen3-TTS 12 Hz model"
CODEC_KIND: Final = "Qwen3-TTS 12 Hz codec (speech_tokenizer)"
SAMPLE_RATE: Final = 24000
SAMPLES_PER_FRAME: Final = 1920


class ModelDirError(ValueError):
    """A directory lacks a file or a key; the message names both."""


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
        raise ModelDirError(
            f"{codec_root}: not a directory (the codec: "
            f"{root.name}/{CODEC_DIR}, or --codec DIR)"
        )
    err = ModelDirError
    files = [
        hfdir.need(root, n, KIND, err) for n in (CONFIG, GENERATION, TOKENIZER_CONFIG)
    ]
    config = hfdir.read_json(root / CONFIG, ModelConfig, err)
    generation = hfdir.read_json(root / GENERATION, GenerationConfig, err)
    files += hfdir.tokenizer_files(root, err) + hfdir.weight_files(root, err)
    files += [root / n for n in OPTIONAL if (root / n).is_file()]
    codec_files = [
        hfdir.need(codec_root, n, CODEC_KIND, err) for n in (CONFIG, PREPROCESSOR)
    ]
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
    return ModelDir(
        root,
        codec_root,
        config,
        generation,
        codec_cfg,
        tuple(files),
        tuple(codec_files),
    )
