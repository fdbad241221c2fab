"""Voice bundles: a directory (or ``.tar``) with ``voice.yaml`` and the graph files.

Layout::

    voice.yaml        manifest (this module's schema, ``format: 1``)
    graphs/*.bin      QNN context binaries, each holding one or more graphs
    onnx/*.onnx       fp32 graphs for the CPU backend (optional)
    cpu/*.npy         tables the host loop needs (embeddings, heads, ...)
    refs/*.npz        precomputed reference-voice features (GPT-SoVITS)
    text/             text-frontend resources

The manifest pins a sha256 for every file and the I/O (names, dtypes, shapes) of
every graph, so ``bundle_verify.verify_bundle`` can prove a bundle is intact and
that each binary computes on the tensors the engine will hand it.  A graph is
named as (binary file, graph name): one binary may hold several graphs (weights
shared across KV buckets, prefill + decode), so several entries may name one file.
"""

from __future__ import annotations

import hashlib
import tarfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Final

import yaml

from daemon.engine.fields import Fields

BUNDLE_FORMAT: Final = 1
MANIFEST: Final = "voice.yaml"
_HASH_CHUNK: Final = 1 << 20


class BundleError(ValueError):
    """A bundle or its manifest is malformed; the message names path and field."""


@dataclass(frozen=True)
class TensorSpec:
    name: str
    dtype: str  # numpy dtype name of the bytes the graph reads/writes
    shape: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "dtype": self.dtype, "shape": list(self.shape)}


@dataclass(frozen=True)
class GraphSpec:
    """One graph the engine runs: graph ``graph`` of context binary ``file``."""

    key: str
    file: str
    sha256: str
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    onnx: str | None = None
    onnx_sha256: str | None = None
    #: the graph's name inside ``file``; None (manifests before graph names):
    #: the file's only graph
    graph: str | None = None

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
    """A loaded (not yet verified) bundle manifest."""

    root: Path
    engine: str
    name: str
    sample_rate: int
    languages: tuple[str, ...]
    graphs: Mapping[str, GraphSpec]
    files: Mapping[str, str] = field(default_factory=dict)
    params: Mapping[str, Any] = field(default_factory=dict)
    voices: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    qnn_sdk: str | None = None
    target: str | None = None

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
        m = Fields(data, where, BundleError)
        fmt = m.integer("format")
        if fmt != BUNDLE_FORMAT:
            raise BundleError(
                f"{where}: format {fmt} is not supported (want {BUNDLE_FORMAT})"
            )
        graphs = {}
        for key, g in m.mapping("graphs").items():
            gr = Fields(g, f"{where}: graphs.{key}", BundleError)
            graphs[key] = GraphSpec(
                key=key,
                file=_relative(gr.text("file"), gr.where + ".file"),
                sha256=gr.text("sha256"),
                inputs=tuple(
                    _tensor(t, f"{gr.where}.inputs") for t in gr.items("inputs")
                ),
                outputs=tuple(
                    _tensor(t, f"{gr.where}.outputs") for t in gr.items("outputs")
                ),
                onnx=_relative(gr.text("onnx", required=False), gr.where + ".onnx"),
                onnx_sha256=gr.text("onnx_sha256", required=False),
                graph=gr.text("graph", required=False),
            )
        _one_digest_per_file(graphs, where)
        files = {
            _relative(k, f"{where}: files"): str(v)
            for k, v in m.mapping("files", required=False).items()
        }
        return cls(
            root=root,
            engine=m.text("engine"),
            name=m.text("name"),
            sample_rate=m.integer("sample_rate"),
            languages=tuple(str(x) for x in m.items("languages")),
            graphs=graphs,
            files=files,
            params=dict(m.mapping("params", required=False)),
            voices={
                str(k): dict(v or {})
                for k, v in m.mapping("voices", required=False).items()
            },
            qnn_sdk=m.text("qnn_sdk", required=False),
            target=m.text("target", required=False),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": BUNDLE_FORMAT,
            "engine": self.engine,
            "name": self.name,
            "sample_rate": self.sample_rate,
            "languages": list(self.languages),
            "qnn_sdk": self.qnn_sdk,
            "target": self.target,
            "params": dict(self.params),
            "voices": {k: dict(v) for k, v in self.voices.items()},
            "graphs": {k: g.to_dict() for k, g in self.graphs.items()},
            "files": dict(self.files),
        }

    def path(self, rel: str) -> Path:
        """Absolute path of a bundle member (never outside the bundle)."""
        return self.root / _relative(rel, "path")

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


def _relative(rel: str | None, where: str) -> Any:
    if rel is None:
        return None
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts or not p.parts:
        raise BundleError(f"{where}: {rel!r} must be a relative path inside the bundle")
    return str(p)


def _one_digest_per_file(graphs: Mapping[str, GraphSpec], where: str) -> None:
    """Entries naming one binary file must pin the same sha256 for it."""
    first: dict[str, GraphSpec] = {}
    for g in graphs.values():
        other = first.setdefault(g.file, g)
        if other.sha256 != g.sha256:
            raise BundleError(
                f"{where}: graphs.{other.key} and graphs.{g.key} name {g.file} "
                f"with different sha256"
            )


def _tensor(data: Any, where: str) -> TensorSpec:
    r = Fields(data, where, BundleError)
    shape = r.items("shape")
    if not all(isinstance(d, int) and d > 0 for d in shape):
        raise BundleError(f"{where}: shape {shape!r} must be positive integers")
    return TensorSpec(r.text("name"), r.text("dtype"), tuple(shape))
