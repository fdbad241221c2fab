"""The runtime's own pieces for the parity gates: graphs as ``Runner``s on the
daemon's two backends (daemon/sdk/graphs.py), and the T2S driver over them.

The gates feed the same inputs to an exported or compiled graph as the
reference gets, through exactly the code the board runs: onnxruntime CPU
(``cpu_runner``) or qnnrt (``Simulator``), and for T2S the engine's driver
(daemon/engines/gptsovits/t2s.py) with the toolkit's KV caches, masks and
decode loop (daemon/sdk/ar).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from daemon.engines.gptsovits import layout
from daemon.engines.gptsovits.t2s import T2S, T2STables
from daemon.sdk.bundles.manifest import TensorSpec, tensor_spec
from daemon.sdk.graphs import CpuRunner, QnnRunner
from scripts.gptsovits.export.shapes import MASK_VALUE, GraphShapes
from scripts.gptsovits.models.t2s import T2SModel


@dataclass(frozen=True)
class _Io:
    """A graph's tensor names in order (what a Runner is built from)."""

    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]


def cpu_runner(path: Path, key: str | None = None) -> CpuRunner:
    """The fp32 (or fp16-KV) ONNX graph at ``path`` on onnxruntime CPU."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])

    def specs(args: Any) -> tuple[TensorSpec, ...]:
        return tuple(TensorSpec(a.name, a.type, tuple(a.shape)) for a in args)

    io = _Io(specs(session.get_inputs()), specs(session.get_outputs()))
    return CpuRunner(key or Path(path).stem, session, io)


class Simulator:
    """One qnnrt backend (the x86 HTP simulator); opens binaries as Runners.

    Each ``open`` closes what the last one opened, so one gate's binaries are
    loaded at a time.
    """

    def __init__(self) -> None:
        import qnnrt

        self._qnnrt = qnnrt
        self.backend = qnnrt.Backend()
        self._group: Any = None

    def open(self, paths: Mapping[str, Path]) -> dict[str, QnnRunner]:
        self._close_group()
        self._group = self._qnnrt.ContextGroup.open(self.backend, list(paths.values()))
        runners = {}
        for key, ctx in zip(paths, self._group.contexts, strict=True):
            graph = ctx.graph()
            io = _Io(
                tuple(tensor_spec(t) for t in graph.inputs),
                tuple(tensor_spec(t) for t in graph.outputs),
            )
            runners[key] = QnnRunner(key, graph, io)
        return runners

    def runner(self, path: Path, key: str | None = None) -> QnnRunner:
        key = key or Path(path).stem
        return self.open({key: path})[key]

    def _close_group(self) -> None:
        if self._group is not None:
            self._group.close()
            self._group = None

    def close(self) -> None:
        self._close_group()
        self.backend.close()


@dataclass(frozen=True)
class T2SGeometry:
    """The T2S fields of ``GsvParams`` for a model exported at ``shapes``."""

    width: int
    layers: int
    heads: int
    head_dim: int
    vocab: int
    prefill_len: int
    kv_buckets: tuple[int, ...]
    mask_value: float
    bert_dim: int


def _f32(t: Any) -> np.ndarray:
    return np.ascontiguousarray(t.detach().cpu().float().numpy())


def t2s_tables(model: T2SModel) -> T2STables:
    """The tables the bundle's ``cpu/`` gets (scripts/gptsovits/export/cpu_tables.py),
    as ``CpuTables.load`` reads them."""
    pe = _f32(model.pe)
    alpha = _f32(model.ar_text_position.alpha), _f32(model.ar_audio_position.alpha)
    return T2STables(
        text_emb=_f32(model.ar_text_embedding.word_embeddings.weight),
        bert_w=_f32(model.bert_proj.weight),
        bert_b=_f32(model.bert_proj.bias),
        audio_emb=_f32(model.ar_audio_embedding.word_embeddings.weight),
        text_pe=alpha[0][0] * pe,
        audio_pe=alpha[1][0] * pe,
        predict=_f32(model.ar_predict_layer.weight),
    )


def t2s_driver(model: T2SModel, shapes: GraphShapes, runners: Mapping[str, Any]) -> T2S:
    """The engine's T2S driver over ``runners`` (t2s_prefill + the decode
    buckets among them)."""
    d = model.dims
    prefix = layout.T2S_DECODE_PREFIX
    buckets = tuple(
        sorted(int(k[len(prefix) :]) for k in runners if k.startswith(prefix))
    )
    geometry = T2SGeometry(
        width=d.dim, layers=d.layers, heads=d.heads, head_dim=d.head_dim,
        vocab=d.vocab, prefill_len=shapes.prefill_len, kv_buckets=buckets,
        mask_value=MASK_VALUE, bert_dim=d.bert_dim,
    )  # fmt: skip
    return T2S(geometry, t2s_tables(model), runners)
