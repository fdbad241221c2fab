"""Read and write GPT-SoVITS checkpoints in the upstream on-disk formats.

Formats (docs/gpt-sovits.md, checkpoints):
- GPT `.ckpt`: torch.save of {"weight": OrderedDict of fp16 tensors, keys "model.*",
  "config": plain dict, "info": "GPT-e<epoch>"}.
- SoVITS `.pth`: torch.save of {"weight": dict of fp16 tensors (no "enc_q.*"),
  "config": a pickled `utils.HParams`, "info": "<epoch>epoch_<steps>iteration"};
  v2Pro/v2ProPlus files have the zip magic "PK" overwritten by "05"/"06".

Upstream code is never imported: `utils.HParams` is mapped to our own HParams
through torch's weights_only allowlist, so loading also runs no foreign code.
"""

from __future__ import annotations

import io
import pickle
import zipfile
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import torch
from torch import nn

ZIP_MAGIC = b"PK"
# process_ckpt.py model_version2byte / head2version.
SOVITS_MAGIC = {b"05": "v2Pro", b"06": "v2ProPlus"}
SOVITS_UNSUPPORTED_MAGIC = {
    b"00": "v1",
    b"01": "v2",
    b"02": "v3",
    b"03": "v3 LoRA",
    b"04": "v4 LoRA",
}
GPT_PREFIX = "model."
# Posterior encoder: training only; upstream drops it on save and loads
# strict=True, so the pretrained base files may still carry it.
SOVITS_TRAINING_ONLY = ("enc_q.",)
# Where upstream's pickled config class lives (GPT_SoVITS/utils.py).
HPARAMS_GLOBAL = ("utils", "HParams")


class CheckpointError(ValueError):
    """A checkpoint that cannot be used; the message names file and cause."""


class HParams:
    """Attribute bag with item access; pickle-compatible with upstream HParams."""

    def __init__(self, **kwargs: Any) -> None:
        for key, value in kwargs.items():
            self[key] = HParams(**value) if type(value) is dict else value

    def keys(self) -> Iterable[str]:
        return self.__dict__.keys()

    def items(self) -> Iterable[tuple[str, Any]]:
        return self.__dict__.items()

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)

    def __setitem__(self, key: str, value: Any) -> None:
        setattr(self, key, value)

    def __contains__(self, key: str) -> bool:
        return key in self.__dict__

    def __len__(self) -> int:
        return len(self.__dict__)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HParams) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return f"HParams({self.__dict__!r})"

    def to_dict(self) -> dict[str, Any]:
        return {
            k: v.to_dict() if isinstance(v, HParams) else v for k, v in self.items()
        }


class _UpstreamNamePickler(pickle._Pickler):
    """Writes our HParams class under upstream's global name `utils.HParams`."""

    def save_global(self, obj: Any, name: str | None = None) -> None:
        if obj is HParams:
            module, qualname = HPARAMS_GLOBAL
            # torch.save uses pickle protocol 2, where GLOBAL is "c<mod>\n<name>\n".
            self.write(pickle.GLOBAL + f"{module}\n{qualname}\n".encode())
            self.memoize(obj)
            return
        super().save_global(obj, name)


# torch.save only needs `Pickler` (and reads `__name__` to detect dill).
_UPSTREAM_PICKLE = SimpleNamespace(__name__="pickle", Pickler=_UpstreamNamePickler)


@dataclass(frozen=True)
class GptCheckpoint:
    config: dict[str, Any]
    weights: dict[str, torch.Tensor]  # "model." prefix removed
    info: str


@dataclass(frozen=True)
class SovitsCheckpoint:
    config: HParams
    weights: dict[str, torch.Tensor]
    info: str
    version: str  # "v2Pro" or "v2ProPlus"


def _check_zip(path: Path, data: bytes) -> None:
    # torch's own reader reports truncation as e.g. "negative seek value";
    # the zip central directory and member CRCs give a clear verdict first.
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            bad = archive.testzip()
    except (zipfile.BadZipFile, EOFError, OSError, ValueError) as exc:
        raise CheckpointError(
            f"{path}: truncated or corrupt checkpoint ({len(data)} bytes): {exc}"
        ) from exc
    if bad is not None:
        raise CheckpointError(f"{path}: corrupt checkpoint, bad CRC in member {bad!r}")


def _torch_load(path: Path, data: bytes) -> dict[str, Any]:
    _check_zip(path, data)
    allowed = [(HParams, ".".join(HPARAMS_GLOBAL))]
    try:
        with torch.serialization.safe_globals(allowed):
            obj = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except (RuntimeError, EOFError, ValueError) as exc:
        raise CheckpointError(f"{path}: cannot load checkpoint: {exc}") from exc
    except pickle.UnpicklingError as exc:
        raise CheckpointError(
            f"{path}: unexpected object in checkpoint: {exc}"
        ) from exc
    if not isinstance(obj, Mapping):
        raise CheckpointError(f"{path}: expected a dict, found {type(obj).__name__}")
    for key in ("weight", "config"):
        if key not in obj:
            raise CheckpointError(f"{path}: no {key!r} entry (keys: {list(obj)})")
    return dict(obj)


def _read(path: Path) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise CheckpointError(f"{path}: cannot read checkpoint: {exc}") from exc


def load_gpt_checkpoint(path: str | Path) -> GptCheckpoint:
    path = Path(path)
    data = _read(path)
    if data[:2] != ZIP_MAGIC:
        raise CheckpointError(
            f"{path}: not a torch zip checkpoint (magic {data[:2]!r})"
        )
    obj = _torch_load(path, data)
    weights: dict[str, torch.Tensor] = {}
    for key, tensor in obj["weight"].items():
        if not key.startswith(GPT_PREFIX):
            raise CheckpointError(f"{path}: weight key {key!r} lacks {GPT_PREFIX!r}")
        weights[key[len(GPT_PREFIX) :]] = tensor
    if not isinstance(obj["config"], Mapping):
        raise CheckpointError(f"{path}: GPT config is not a dict")
    return GptCheckpoint(dict(obj["config"]), weights, str(obj.get("info", "")))


def save_gpt_checkpoint(
    path: str | Path, weights: Mapping[str, torch.Tensor], config: dict, info: str
) -> None:
    """Write the s1_train.py format: fp16 tensors under "model.*"."""
    state = OrderedDict(
        (GPT_PREFIX + k, v.detach().half().contiguous()) for k, v in weights.items()
    )
    buf = io.BytesIO()
    torch.save(OrderedDict(weight=state, config=config, info=info), buf)
    _write_atomic(Path(path), buf.getvalue())


def load_sovits_checkpoint(path: str | Path) -> SovitsCheckpoint:
    path = Path(path)
    data = _read(path)
    head = data[:2]
    if head in SOVITS_UNSUPPORTED_MAGIC:
        raise CheckpointError(
            f"{path}: SoVITS {SOVITS_UNSUPPORTED_MAGIC[head]} checkpoint; "
            "only v2Pro / v2ProPlus are supported"
        )
    if head in SOVITS_MAGIC:
        data = ZIP_MAGIC + data[2:]  # process_ckpt.load_sovits_new
    elif head != ZIP_MAGIC:
        raise CheckpointError(f"{path}: unknown SoVITS header {head!r}")
    obj = _torch_load(path, data)
    config = obj["config"]
    if not isinstance(config, HParams):
        raise CheckpointError(f"{path}: config is {type(config).__name__}, not HParams")
    weights = dict(obj["weight"])
    if "sv_emb.weight" not in weights:
        raise CheckpointError(f"{path}: no 'sv_emb.weight': not a v2Pro model")
    if head in SOVITS_MAGIC:
        version = SOVITS_MAGIC[head]
    else:  # plain zip (e.g. a pretrained base): ProPlus has the wider decoder
        version = (
            "v2ProPlus" if weights["dec.ups.0.weight_v"].shape[0] > 512 else "v2Pro"
        )
    return SovitsCheckpoint(config, weights, str(obj.get("info", "")), version)


def save_sovits_checkpoint(
    path: str | Path,
    weights: Mapping[str, torch.Tensor],
    config: HParams,
    info: str,
    version: str = "v2Pro",
) -> None:
    """Write the process_ckpt.savee/my_save2 format, magic bytes included."""
    magic = {v: k for k, v in SOVITS_MAGIC.items()}.get(version)
    if magic is None:
        raise ValueError(f"unsupported SoVITS version {version!r}")
    state = {
        k: v.detach().half().contiguous()
        for k, v in weights.items()
        if not k.startswith(SOVITS_TRAINING_ONLY)
    }
    buf = io.BytesIO()
    torch.save(
        OrderedDict(weight=state, config=config, info=info),
        buf,
        pickle_module=_UPSTREAM_PICKLE,
    )
    _write_atomic(Path(path), magic + buf.getvalue()[2:])


def _write_atomic(path: Path, data: bytes) -> None:
    """Never leave a truncated checkpoint behind (upstream also writes a
    temporary file and moves it into place)."""
    tmp = path.with_name(path.name + ".part")
    tmp.write_bytes(data)
    tmp.replace(path)


def load_state_strict(
    module: nn.Module,
    weights: Mapping[str, torch.Tensor],
    source: str,
    ignore_prefixes: tuple[str, ...] = (),
    key_prefix: str = "",
) -> None:
    """Copy `weights` into `module`; every key must match by name and shape.

    `key_prefix` is only for messages, so they name keys as stored in the file.
    """
    own = module.state_dict()
    given = {k: v for k, v in weights.items() if not k.startswith(ignore_prefixes)}
    missing = sorted(set(own) - set(given))
    unexpected = sorted(set(given) - set(own))
    if missing:
        raise CheckpointError(
            f"{source}: missing key {key_prefix + missing[0]!r} "
            f"({len(missing)} missing)"
        )
    if unexpected:
        raise CheckpointError(
            f"{source}: unexpected key {key_prefix + unexpected[0]!r} "
            f"({len(unexpected)} unexpected)"
        )
    for key, tensor in given.items():
        if tuple(tensor.shape) != tuple(own[key].shape):
            raise CheckpointError(
                f"{source}: key {key_prefix + key!r} has shape {tuple(tensor.shape)}, "
                f"model expects {tuple(own[key].shape)}"
            )
    module.load_state_dict(
        {k: v.to(own[k].dtype) for k, v in given.items()}, strict=True
    )
