"""read_model_dir: the released layout is read, every key upstream reads is
declared, and each kind of bad model directory is refused naming file and key."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path
from typing import Any

import pytest
import yaml

from hexvoice_indextts.model_dir import ModelDirError, read_model_dir
from hexvoice_indextts.model_dir.config import Config
from hexvoice_indextts.tiny.model import tiny_config


def write_dir(root: Path, config: dict[str, Any]) -> Path:
    """config.yaml and the files it names (their contents are not read here)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    files = (
        "gpt_checkpoint",
        "s2mel_checkpoint",
        "w2v_stat",
        "emo_matrix",
        "spk_matrix",
    )
    for key in files:
        (root / config[key]).write_bytes(b"")
    (root / config["dataset"]["bpe_model"]).write_bytes(b"")
    (root / config["qwen_emo_path"]).mkdir(exist_ok=True)
    (root / config["qwen_emo_path"] / "config.json").write_text("{}")
    return root


def refusal(tmp_path: Path, edit: Any) -> str:
    cfg = tiny_config()
    edit(cfg)
    with pytest.raises(ModelDirError) as err:
        read_model_dir(write_dir(tmp_path / "m", cfg))
    return str(err.value)


def declared(tp: Any, prefix: str = "") -> set[str]:
    """Every key path the Config declares (a dict-typed field is one leaf)."""
    out: set[str] = set()
    hints = typing.get_type_hints(tp)
    for f in dataclasses.fields(tp):
        arms = [a for a in typing.get_args(hints[f.name]) or (hints[f.name],)]
        record = next((a for a in arms if dataclasses.is_dataclass(a)), None)
        out |= {f"{prefix}{f.name}"}
        if record is not None:
            out |= declared(record, f"{prefix}{f.name}.")
    return out


def test_the_released_layout_reads(tmp_path: Path) -> None:
    m = read_model_dir(write_dir(tmp_path / "m", tiny_config()))
    c = m.config
    assert (c.gpt.model_dim, c.s2mel.DiT.hidden_dim) == (1280, 40)
    assert c.emo_num == [3, 17, 2, 8, 4, 5, 10, 24]
    assert (
        c.gpt.condition_module is not None and c.gpt.condition_module.output_size == 36
    )
    assert m.gpt == tmp_path / "m" / "gpt.pth" and m.bpe == tmp_path / "m" / "bpe.model"
    assert m.qwen_emo.is_dir()
    assert c.vocoder.name == "nvidia/bigvgan_v2_22khz_80band_256x"


def test_every_key_upstream_reads_is_declared(runs) -> None:  # type: ignore[no-untyped-def]
    missing = {k for k in runs.config_reads if k not in declared(Config)}
    # a dict-typed field (dataset.mel) declares its keys as one leaf
    assert not {k for k in missing if not k.startswith("dataset.mel.")}


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda c: c["gpt"].update(layers="2"),
            "config.yaml: gpt.layers: expected an integer >= 1, found '2'",
        ),
        (
            lambda c: c["gpt"].update(layer=2),
            "config.yaml: gpt: expected only the fields",
        ),
        (
            lambda c: c.pop("s2mel"),
            "config.yaml: s2mel: expected",
        ),
        (
            lambda c: c["gpt"].update(model_dim=1024),
            "config.yaml: gpt.model_dim: expected 1280 (upstream's code fixes it",
        ),
        (
            lambda c: c["s2mel"]["wavenet"].update(hidden_dim=41),
            "config.yaml: s2mel.wavenet.hidden_dim: expected 40 (s2mel.DiT.hidden_dim",
        ),
        (
            lambda c: c.update(emo_num=[1] * 7),
            "config.yaml: emo_num: expected 8 row counts, one per emotion, found [1, 1",
        ),
        (
            lambda c: c["gpt"].update(stop_mel_token=55),
            "config.yaml: gpt.stop_mel_token: expected an id below gpt.number_mel_codes"
            " (55), found 55",
        ),
        (
            lambda c: c["gpt"].update(condition_type="perceiver"),
            "config.yaml: gpt.condition_type: expected 'conformer_perceiver'",
        ),
    ],
)
def test_a_bad_config_is_refused_naming_the_key(
    tmp_path: Path, edit: Any, message: str
) -> None:
    assert message in refusal(tmp_path, edit)


def test_a_missing_file_is_refused_naming_key_and_file(tmp_path: Path) -> None:
    root = write_dir(tmp_path / "m", tiny_config())
    (root / "s2mel.pth").unlink()
    named = r"config.yaml: s2mel_checkpoint: expected a file in .*, found 's2mel.pth'"
    with pytest.raises(ModelDirError, match=named + r" \(no such file\)"):
        read_model_dir(root)
    (root / "s2mel.pth").write_bytes(b"")
    (root / "qwen0.6bemo4-merge" / "config.json").unlink()
    with pytest.raises(ModelDirError, match="qwen_emo_path: .*no config.json in it"):
        read_model_dir(root)


def test_not_a_model_dir(tmp_path: Path) -> None:
    with pytest.raises(ModelDirError, match="found no directory"):
        read_model_dir(tmp_path / "nowhere")
    with pytest.raises(ModelDirError, match="found no config.yaml"):
        read_model_dir(tmp_path)
    (tmp_path / "config.yaml").write_text("gpt: [unclosed")
    with pytest.raises(ModelDirError, match="config.yaml: not YAML"):
        read_model_dir(tmp_path)
