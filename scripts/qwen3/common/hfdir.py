"""Reading a Hugging Face model directory before any model loads.

The Qwen3 builds (ASR, TTS) read only the keys they use, through the project's
typed reader (daemon/config/reader.py), so a missing or mistyped key fails
naming the file and the key; the other keys are upstream's business.  Each
build passes its own error class and the kind of directory it expects, so the
messages say what the user has to fix.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from daemon.config.reader import read

TOKENIZER_JSON: Final = "tokenizer.json"
#: the slow tokenizer's files, from which transformers builds the fast one
TOKENIZER_BPE: Final = ("vocab.json", "merges.txt")
WEIGHTS: Final = "model.safetensors"
WEIGHTS_INDEX: Final = "model.safetensors.index.json"

Error = Callable[[str], Exception]


def need(root: Path, name: str, kind: str, error: Error) -> Path:
    """``root/name``, or ``error`` saying a ``kind`` directory has one."""
    path = root / name
    if not path.is_file():
        raise error(f"{root}: no {name} (a {kind} directory has one)")
    return path


def tokenizer_files(root: Path, error: Error) -> list[Path]:
    """tokenizer.json, else vocab.json + merges.txt (transformers converts)."""
    if (root / TOKENIZER_JSON).is_file():
        return [root / TOKENIZER_JSON]
    missing = [n for n in TOKENIZER_BPE if not (root / n).is_file()]
    if missing:
        raise error(
            f"{root}: no tokenizer: neither {TOKENIZER_JSON} nor "
            f"{' + '.join(TOKENIZER_BPE)} (missing {', '.join(missing)})"
        )
    return [root / n for n in TOKENIZER_BPE]


def weight_files(root: Path, error: Error) -> list[Path]:
    """model.safetensors, else the index and every shard it names."""
    if (root / WEIGHTS).is_file():
        return [root / WEIGHTS]
    if not (root / WEIGHTS_INDEX).is_file():
        raise error(f"{root}: no weights: neither {WEIGHTS} nor {WEIGHTS_INDEX}")
    index = json.loads((root / WEIGHTS_INDEX).read_text(encoding="utf-8"))
    shards = sorted(set((index.get("weight_map") or {}).values()))
    missing = [s for s in shards if not (root / s).is_file()]
    if not shards or missing:
        raise error(
            f"{root / WEIGHTS_INDEX}: missing shard(s) {missing or 'in weight_map'}"
        )
    return [root / WEIGHTS_INDEX, *(root / s for s in shards)]


def load_json(path: Path, error: Error) -> Any:
    """The parsed file; ``error`` naming it when it is not JSON."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise error(f"{path}: invalid JSON: {exc}") from None


def read_json(path: Path, cls: type, error: Error) -> Any:
    """``path`` read as ``cls`` (only the keys ``cls`` declares)."""
    return read(
        declared(load_json(path, error), cls), cls, where=str(path), error=error
    )


def declared(data: Any, cls: Any) -> Any:
    """``data`` with only the keys ``cls`` declares (recursively, through
    dataclass fields and ``X | None``): the reader refuses unknown keys, and
    these files hold many that are not ours."""
    cls = _dataclass_of(cls)
    if not (isinstance(data, dict) and cls is not None):
        return data
    hints = typing.get_type_hints(cls, include_extras=True)
    names = {f.name for f in dataclasses.fields(cls)}
    return {k: declared(v, hints[k]) for k, v in data.items() if k in names}


def _dataclass_of(tp: Any) -> Any:
    """The dataclass ``tp`` is, or the one dataclass in a union with None."""
    if dataclasses.is_dataclass(tp):
        return tp
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    if typing.get_origin(tp) is typing.Annotated:
        return _dataclass_of(args[0])
    found = [a for a in args if dataclasses.is_dataclass(a)]
    return found[0] if len(found) == 1 and len(args) == 1 else None
