"""An IndexTTS-2 model directory, read and checked before any model loads.

``read_model_dir(path)`` reads ``config.yaml`` with hexvoice's typed reader
(:mod:`.config` declares its shape), checks the widths upstream's code fixes
and the files the config names, and returns a :class:`ModelDir`.  Every
refusal is a :class:`ModelDirError` naming the file and the key::

    /m/config.yaml: gpt.model_dim: expected 1280 (...), found 1024
    /m/config.yaml: gpt_checkpoint: expected a file in /m, found 'gpt.pth' (no
    such file)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from daemon.config.reader import fail, read

from hexvoice_indextts.model_dir.config import Config

CONFIG_FILE: Final = "config.yaml"

#: Widths upstream's code fixes whatever config.yaml says (docs/upstream.md):
#: w2v-BERT 2.0's hidden size (UnifiedVoice's conformer input_size, the s2mel
#: gpt_layer's output), read from its layer 17 (infer_v2.get_emb)
W2V_WIDTH: Final = 1024
W2V_LAYER: Final = 17
#: the GPT's width: s2mel's gpt_layer starts with Linear(1280, 256)
GPT_WIDTH: Final = 1280
#: the CAM++ speaker style: CAMPPlus(feat_dim=80, embedding_size=192) in infer_v2
STYLE_DIM: Final = 192
#: mel bands: kaldi fbank(num_mel_bins=80) for CAM++, the 80-band BigVGAN
MEL_BINS: Final = 80
#: the emotion vector's weights (infer_v2's emo_vector: eight emotions)
EMOTIONS: Final = 8


class ModelDirError(ValueError):
    """The model directory is not one hexvoice can build; the message says
    which file and key.  A configuration error (exit 78 in a build)."""


@dataclass(frozen=True)
class ModelDir:
    """A checked model directory: its config and the files it names."""

    root: Path
    config: Config

    def file(self, name: str) -> Path:
        return self.root / name

    @property
    def gpt(self) -> Path:
        return self.file(self.config.gpt_checkpoint)

    @property
    def s2mel(self) -> Path:
        return self.file(self.config.s2mel_checkpoint)

    @property
    def w2v_stat(self) -> Path:
        return self.file(self.config.w2v_stat)

    @property
    def bpe(self) -> Path:
        return self.file(self.config.dataset.bpe_model)

    @property
    def qwen_emo(self) -> Path:
        return self.file(self.config.qwen_emo_path)


def read_model_dir(root: Path) -> ModelDir:
    """``root`` as IndexTTS-2 is downloaded, read and checked (ModelDirError)."""
    import yaml

    root = Path(root)
    where = str(root / CONFIG_FILE)
    if not (root / CONFIG_FILE).is_file():
        raise ModelDirError(
            f"{root}: expected an IndexTTS-2 model directory (with {CONFIG_FILE}), "
            f"found {'no directory' if not root.is_dir() else 'no ' + CONFIG_FILE}"
        )
    try:
        data = yaml.safe_load((root / CONFIG_FILE).read_text())
    except yaml.YAMLError as exc:
        raise ModelDirError(f"{where}: not YAML: {exc}") from None
    config = read(data, Config, where=where, error=ModelDirError)
    _check_widths(config, where)
    _check_files(config, root, where)
    return ModelDir(root, config)


def _fixed(c: Config) -> list[tuple[str, Any, Any, str]]:
    """(key, its value, what it must be, why) for every width the config
    cannot choose."""
    s, fixed = c.s2mel, "upstream's code fixes it"
    w2v, mels = f"{fixed}: w2v-BERT 2.0's width", f"{fixed}: 80-band mels"
    rows = [
        ("gpt.model_dim", c.gpt.model_dim, GPT_WIDTH, f"{fixed}: s2mel's gpt_layer"),
        ("semantic_codec.hidden_size", c.semantic_codec.hidden_size, W2V_WIDTH, w2v),
        (
            "s2mel.length_regulator.in_channels",
            s.length_regulator.in_channels,
            W2V_WIDTH,
            w2v,
        ),
        ("s2mel.style_encoder.dim", s.style_encoder.dim, STYLE_DIM, f"{fixed}: CAM++"),
        (
            "s2mel.preprocess_params.spect_params.n_mels",
            s.preprocess_params.spect_params.n_mels,
            MEL_BINS,
            mels,
        ),
        ("s2mel.DiT.in_channels", s.DiT.in_channels, MEL_BINS, mels),
        (
            "s2mel.DiT.content_dim",
            s.DiT.content_dim,
            s.length_regulator.channels,
            "s2mel.length_regulator.channels: the regulator's output",
        ),
        (
            "gpt.condition_type",
            c.gpt.condition_type,
            "conformer_perceiver",
            "IndexTTS-2's conditioning, the one hexvoice ports",
        ),
    ]
    if s.DiT.final_layer_type == "wavenet":
        rows.append(
            (
                "s2mel.wavenet.hidden_dim",
                s.wavenet.hidden_dim,
                s.DiT.hidden_dim,
                "s2mel.DiT.hidden_dim: the DiT's time embedding feeds the wavenet head",
            )
        )
    return rows


def _check_widths(c: Config, where: str) -> None:
    for key, value, wanted, why in _fixed(c):
        if value != wanted:
            raise fail(where, key, f"{wanted!r} ({why})", value, ModelDirError)
    g = c.gpt
    for key in ("condition_module", "emo_condition_module"):
        if getattr(g, key) is None:
            raise fail(
                where, f"gpt.{key}", "the conformer's widths", None, ModelDirError
            )
    if len(c.emo_num) != EMOTIONS:
        expected = f"{EMOTIONS} row counts, one per emotion"
        raise fail(where, "emo_num", expected, c.emo_num, ModelDirError)
    for kind, count_key in (
        ("mel", "number_mel_codes"),
        ("text", "number_text_tokens"),
    ):
        count = getattr(g, count_key)
        for end in ("start", "stop"):
            key = f"{end}_{kind}_token"
            if getattr(g, key) >= count:
                expected = f"an id below gpt.{count_key} ({count})"
                raise fail(
                    where, f"gpt.{key}", expected, getattr(g, key), ModelDirError
                )


def _check_files(c: Config, root: Path, where: str) -> None:
    for key, name in (
        ("gpt_checkpoint", c.gpt_checkpoint),
        ("s2mel_checkpoint", c.s2mel_checkpoint),
        ("w2v_stat", c.w2v_stat),
        ("emo_matrix", c.emo_matrix),
        ("spk_matrix", c.spk_matrix),
        ("dataset.bpe_model", c.dataset.bpe_model),
    ):
        if not (root / name).is_file():
            found = f"found {name!r} (no such file)"
            raise ModelDirError(f"{where}: {key}: expected a file in {root}, {found}")
    qwen = root / c.qwen_emo_path
    if not (qwen / "config.json").is_file():
        raise ModelDirError(
            f"{where}: qwen_emo_path: expected the emotion model's directory (with "
            f"config.json) in {root}, found {c.qwen_emo_path!r} "
            f"({'no config.json in it' if qwen.is_dir() else 'no such directory'})"
        )
