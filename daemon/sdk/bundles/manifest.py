"""Voice bundles: a directory (or ``.tar``) with ``voice.yaml`` and the graph files.

Layout::

    voice.yaml        manifest (this module's schema, ``format: 1``)
    graphs/*.bin      QNN context binaries, each holding one or more graphs
    onnx/*.onnx       fp32 graphs for the CPU backend (optional)
    cpu/*.npy         tables the host loop needs (embeddings, heads, ...)
    refs/*.npz        precomputed reference-voice features (GPT-SoVITS)
    text/             text-frontend resources

The manifest pins a sha256 for every file and the I/O (names, dtypes, shapes) of
every graph, so ``sdk.verify.verify_bundle`` can prove a bundle is intact and
that each binary computes on the tensors the engine will hand it.  A graph is
named as (binary file, graph name): one binary may hold several graphs (weights
shared across KV buckets, prefill + decode), so several entries may name one file.
"""

from __future__ import annotations

import hashlib
import tarfile
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any, Final, Literal

import yaml

from daemon.config.fields import Dim, Text
from daemon.config.reader import INTERNAL, invalid, read
from daemon.sdk.capabilities import Task

BUNDLE_FORMAT: Final = 1
MANIFEST: Final = "voice.yaml"
_HASH_CHUNK: Final = 1 << 20
_RELATIVE: Final = "a relative path inside the bundle"

# The manifest's schema is the dataclasses below (read by daemon/config/reader,
# its field types from daemon/config/fields).


class BundleError(ValueError):
    """A bundle or its manifest is malformed; the message names path and field."""


@dataclass(frozen=True)
class TensorSpec:
    name: Text
    dtype: Text  # numpy dtype name of the bytes the graph reads/writes
    shape: tuple[Dim, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "dtype": self.dtype, "shape": list(self.shape)}


@dataclass(frozen=True)
class GraphSpec:
    """One graph the engine runs: graph ``graph`` of context binary ``file``."""

    file: Text
    sha256: Text
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    onnx: Text | None = None
    onnx_sha256: Text | None = None
    #: the graph's name inside ``file``; None (manifests before graph names):
    #: the file's only graph
    graph: Text | None = None
    #: its name under the manifest's ``graphs`` (the mapping key, not a field)
    key: str = field(default="", metadata=INTERNAL)

    def __post_init__(self) -> None:
        object.__setattr__(self, "file", _normal(self.file, "file"))
        if self.onnx is not None:
            object.__setattr__(self, "onnx", _normal(self.onnx, "onnx"))

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"file": self.file}
        if self.graph is not None:
            d["graph"] = self.graph
        d |= {
            "sha256": self.sha256,
            "inputs": [t.to_dict() for t in self.inputs],
            "outputs": [t.to_dict() for t in self.outputs],
        }
        if self.onnx:
            d["onnx"], d["onnx_sha256"] = self.onnx, self.onnx_sha256
        return d


@dataclass(frozen=True)
class Bundle:
    """A loaded (not yet verified) bundle manifest; the fields are voice.yaml's."""

    engine: Text
    name: Text
    sample_rate: int
    languages: tuple[Text, ...]
    graphs: Mapping[str, GraphSpec]
    files: Mapping[str, str] = field(default_factory=dict)
    params: Mapping[str, Any] = field(default_factory=dict)
    #: voice name -> its entry (null: an empty one)
    voices: Mapping[str, Mapping[str, Any] | None] = field(default_factory=dict)
    qnn_sdk: Text | None = None
    target: Text | None = None
    #: the job its engine does; manifests from before ASR bundles say nothing
    #: and are TTS (verify refuses an engine of another task)
    task: Task = "tts"
    #: the licence its builder accepted (daemon/sdk/license.py), for engines
    #: under terms a user must accept; None for the others
    license: Text | None = None
    #: the only manifest format there is (a new one gets a new number)
    format: Literal[1] = BUNDLE_FORMAT
    #: the bundle's directory (where the manifest was found, not a field)
    root: Path = field(default=Path("."), metadata=INTERNAL)

    def __post_init__(self) -> None:
        for rel in self.files:
            _normal(rel, f"files[{rel!r}]")
        _one_digest_per_file(self.graphs)

    @classmethod
    def load(cls, root: str | Path) -> Bundle:
        root = Path(root)
        path = root / MANIFEST
        if not path.is_file():
            raise BundleError(f"{root}: no {MANIFEST} (not a voice bundle)")
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise BundleError(f"{path}: invalid YAML: {exc}") from exc
        return cls.from_dict(root, data, str(path))

    @classmethod
    def from_dict(cls, root: Path, data: Any, where: str = MANIFEST) -> Bundle:
        b = read(data, cls, where=where, error=BundleError)
        return replace(
            b,
            root=Path(root),
            graphs={k: replace(g, key=k) for k, g in b.graphs.items()},
            files={_normal(k, "files"): v for k, v in b.files.items()},
            voices={k: dict(v or {}) for k, v in b.voices.items()},
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": BUNDLE_FORMAT,
            "engine": self.engine,
            "task": self.task,
            "name": self.name,
            "sample_rate": self.sample_rate,
            "languages": list(self.languages),
            "qnn_sdk": self.qnn_sdk,
            "target": self.target,
            **({"license": self.license} if self.license else {}),
            "params": dict(self.params),
            "voices": {k: dict(v) for k, v in self.voices.items()},
            "graphs": {k: g.to_dict() for k, g in self.graphs.items()},
            "files": dict(self.files),
        }

    def path(self, rel: str) -> Path:
        """Absolute path of a bundle member (never outside the bundle)."""
        try:
            return self.root / _normal(rel, "path")
        except ValueError as exc:
            raise BundleError(str(exc)) from None

    @property
    def binaries(self) -> dict[str, str]:
        """Every context binary the graphs name, once: file -> sha256, in order."""
        return {g.file: g.sha256 for g in self.graphs.values()}


def tensor_spec(info: Any) -> TensorSpec:
    """Manifest entry for a ``qnnrt.TensorInfo``."""
    dt = info.native_dtype
    return TensorSpec(
        info.name, str(dt) if dt is not None else info.dtype_name, info.shape
    )


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_HASH_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def write_manifest(bundle: Bundle) -> Path:
    path = bundle.root / MANIFEST
    text = yaml.safe_dump(bundle.to_dict(), sort_keys=False, allow_unicode=True)
    path.write_text(text, encoding="utf-8")
    return path


def pack(root: str | Path, out: str | Path) -> Path:
    """Write ``root`` as an uncompressed tar (binaries do not compress); a
    symlinked member is stored as its file (``unpack`` refuses links)."""
    root, out = Path(root), Path(out)
    with tarfile.open(out, "w", dereference=True) as tar:
        for p in sorted(root.rglob("*")):
            if p.is_file():
                tar.add(p, arcname=str(p.relative_to(root)))
    return out


def unpack(tar_path: str | Path, dest: str | Path) -> Path:
    """Extract a bundle tar safely (no absolute paths, links or ``..``)."""
    dest = Path(dest)
    with tarfile.open(tar_path) as tar:
        tar.extractall(dest, filter="data")
    return dest


def _normal(rel: str, what: str) -> str:
    """``rel`` as a normal relative POSIX path; never absolute or with ``..``."""
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts or not p.parts:
        raise invalid(what, _RELATIVE, rel)
    return str(p)


def _one_digest_per_file(graphs: Mapping[str, GraphSpec]) -> None:
    """Entries naming one binary file must pin the same sha256 for it."""
    first: dict[str, str] = {}
    for key, g in graphs.items():
        other = first.setdefault(g.file, key)
        if graphs[other].sha256 != g.sha256:
            raise invalid(
                "graphs",
                "one sha256 per binary file",
                f"graphs.{other} and graphs.{key} name {g.file} with different ones",
                raw=True,
            )
