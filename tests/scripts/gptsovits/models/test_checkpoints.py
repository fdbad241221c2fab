"""Upstream checkpoint formats: round trip, strict keys, v2Pro magic, damage."""

from __future__ import annotations

import io
import pickle
import sys
import types
from pathlib import Path

import pytest
import torch

from scripts.gptsovits.models.checkpoints import (
    CheckpointError,
    HParams,
    load_gpt_checkpoint,
    load_sovits_checkpoint,
    save_gpt_checkpoint,
    save_sovits_checkpoint,
)
from scripts.gptsovits.models.sovits import SovitsModel
from scripts.gptsovits.models.t2s import T2SModel
from scripts.gptsovits.synthetic.voice import SyntheticVoice


def _raw(path: Path) -> dict:
    """The file as upstream's loader sees it, with a stand-in `utils.HParams`."""
    data = path.read_bytes()
    if data[:2] != b"PK":
        data = b"PK" + data[2:]
    utils = types.ModuleType("utils")
    utils.HParams = type("HParams", (), {"__module__": "utils"})
    saved = sys.modules.get("utils")
    sys.modules["utils"] = utils
    try:
        return torch.load(io.BytesIO(data), weights_only=False)
    finally:
        if saved is None:
            del sys.modules["utils"]
        else:
            sys.modules["utils"] = saved


def test_gpt_file_is_upstream_layout(synthetic_voice: SyntheticVoice) -> None:
    raw = _raw(synthetic_voice.gpt_ckpt)
    assert set(raw) == {"weight", "config", "info"}
    assert raw["info"] == f"GPT-e{synthetic_voice.gpt_epoch}"
    keys = list(raw["weight"])
    assert all(k.startswith("model.") for k in keys)
    assert "model.h.layers.1.self_attn.in_proj_weight" in keys
    assert {t.dtype for t in raw["weight"].values()} == {torch.float16}
    assert raw["config"]["model"]["n_layer"] == 2


def test_gpt_round_trip_identical_tensors(
    synthetic_voice: SyntheticVoice, t2s_model: T2SModel
):
    stored = _raw(synthetic_voice.gpt_ckpt)["weight"]
    loaded = t2s_model.state_dict()
    assert len(loaded) == len(stored)
    for key, tensor in loaded.items():
        assert torch.equal(tensor, stored["model." + key].float()), key


def test_sovits_file_is_v2pro_with_pickled_hparams(
    synthetic_voice: SyntheticVoice,
) -> None:
    data = synthetic_voice.sovits_pth.read_bytes()
    assert data[:2] == b"05"  # process_ckpt.my_save2 for v2Pro
    # The config pickles under upstream's class name, not ours.
    assert b"utils\nHParams" in data and b"scripts.gptsovits" not in data
    raw = _raw(synthetic_voice.sovits_pth)
    assert type(raw["config"]).__module__ == "utils"
    assert raw["config"].model.version == "v2Pro"
    assert not any(k.startswith("enc_q") for k in raw["weight"])


def test_sovits_round_trip_identical_tensors(
    synthetic_voice: SyntheticVoice, sovits_model: SovitsModel
) -> None:
    ckpt = load_sovits_checkpoint(synthetic_voice.sovits_pth)
    assert ckpt.version == "v2Pro"
    assert isinstance(ckpt.config.model, HParams)
    assert ckpt.config.model.gin_channels == 80
    loaded = sovits_model.state_dict()
    assert set(loaded) == set(ckpt.weights)
    for key, tensor in loaded.items():
        assert torch.equal(tensor, ckpt.weights[key].float()), key


def test_v2proplus_magic_and_plain_zip(
    tmp_path: Path, synthetic_voice: SyntheticVoice
) -> None:
    ckpt = load_sovits_checkpoint(synthetic_voice.sovits_pth)
    plus = tmp_path / "plus.pth"
    save_sovits_checkpoint(plus, ckpt.weights, ckpt.config, "x", version="v2ProPlus")
    assert plus.read_bytes()[:2] == b"06"
    assert load_sovits_checkpoint(plus).version == "v2ProPlus"
    plain = tmp_path / "plain.pth"  # e.g. a pretrained base file
    plain.write_bytes(b"PK" + plus.read_bytes()[2:])
    assert load_sovits_checkpoint(plain).version == "v2Pro"  # narrow decoder


@pytest.mark.parametrize(
    ("head", "word"), [(b"02", "v3"), (b"04", "v4 LoRA"), (b"zz", "header")]
)
def test_other_sovits_headers_rejected(
    tmp_path: Path, synthetic_voice, head, word
) -> None:
    path = tmp_path / "other.pth"
    path.write_bytes(head + synthetic_voice.sovits_pth.read_bytes()[2:])
    with pytest.raises(CheckpointError, match=word):
        load_sovits_checkpoint(path)


def test_missing_key_is_named(tmp_path: Path, synthetic_voice: SyntheticVoice) -> None:
    ckpt = load_gpt_checkpoint(synthetic_voice.gpt_ckpt)
    weights = dict(ckpt.weights)
    del weights["h.layers.1.norm2.bias"]
    path = tmp_path / "missing.ckpt"
    save_gpt_checkpoint(path, weights, ckpt.config, ckpt.info)
    with pytest.raises(
        CheckpointError, match=r"missing key 'model\.h\.layers\.1\.norm2\.bias'"
    ):
        T2SModel.from_checkpoint(load_gpt_checkpoint(path), str(path))


def test_unexpected_key_is_named(
    tmp_path: Path, synthetic_voice: SyntheticVoice
) -> None:
    ckpt = load_sovits_checkpoint(synthetic_voice.sovits_pth)
    weights = dict(ckpt.weights, **{"dec.extra.weight": torch.zeros(2)})
    path = tmp_path / "extra.pth"
    save_sovits_checkpoint(path, weights, ckpt.config, ckpt.info)
    with pytest.raises(CheckpointError, match=r"unexpected key 'dec\.extra\.weight'"):
        SovitsModel.from_checkpoint(load_sovits_checkpoint(path))


def test_wrong_shape_is_named(tmp_path: Path, synthetic_voice: SyntheticVoice) -> None:
    ckpt = load_gpt_checkpoint(synthetic_voice.gpt_ckpt)
    weights = dict(ckpt.weights)
    weights["ar_predict_layer.weight"] = weights["ar_predict_layer.weight"][:-1]
    path = tmp_path / "shape.ckpt"
    save_gpt_checkpoint(path, weights, ckpt.config, ckpt.info)
    with pytest.raises(
        CheckpointError, match="'model.ar_predict_layer.weight' has shape"
    ):
        T2SModel.from_checkpoint(load_gpt_checkpoint(path))


def test_training_only_keys_are_ignored(synthetic_voice: SyntheticVoice) -> None:
    ckpt = load_sovits_checkpoint(synthetic_voice.sovits_pth)
    weights = dict(ckpt.weights, **{"enc_q.pre.weight": torch.zeros(3)})
    model = SovitsModel.from_checkpoint(
        type(ckpt)(ckpt.config, weights, ckpt.info, ckpt.version)
    )
    assert "enc_q.pre.weight" not in model.state_dict()


@pytest.mark.parametrize("which", ["gpt", "sovits"])
@pytest.mark.parametrize("keep", [0.5, 0.99])
def test_truncated_checkpoint_clear_error(
    tmp_path, synthetic_voice, which, keep
) -> None:
    src = synthetic_voice.gpt_ckpt if which == "gpt" else synthetic_voice.sovits_pth
    data = src.read_bytes()
    path = tmp_path / src.name
    path.write_bytes(data[: int(len(data) * keep)])
    load = load_gpt_checkpoint if which == "gpt" else load_sovits_checkpoint
    with pytest.raises(CheckpointError, match="truncated or corrupt"):
        load(path)


def test_flipped_byte_fails_crc(
    tmp_path: Path, synthetic_voice: SyntheticVoice
) -> None:
    data = bytearray(synthetic_voice.gpt_ckpt.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path = tmp_path / "flipped.ckpt"
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="corrupt"):
        load_gpt_checkpoint(path)


def test_foreign_pickle_global_rejected(tmp_path: Path) -> None:
    """Loading never runs code from the file: only allow-listed globals."""
    path = tmp_path / "evil.ckpt"
    torch.save({"weight": {}, "config": pickle.loads(pickle.dumps(Path("x")))}, path)
    with pytest.raises(CheckpointError, match="unexpected object"):
        load_gpt_checkpoint(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="cannot read"):
        load_gpt_checkpoint(tmp_path / "nope.ckpt")
