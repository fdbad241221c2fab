"""What every stage of a GPT-SoVITS build reads: its sources, graph shapes,
settings and work dir, and the models it loads (once per run, only when a
stage that runs needs them: a fully resumed run loads none).

Work dir (scripts/common/build/workdir.py):

    onnx/<key>.onnx       fp32 graphs (bundle onnx/, CPU gates)
    onnx_npu/<key>.onnx   the T2S graphs with float16 K/V (compiled for the NPU)
    stage/{cpu,text,refs} bundle files other than graphs
    bins/<key>.bin        compiled context binaries

This module imports no model (each stage imports the loaders it calls), so
it adds little to any stage's code key.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from daemon.engines.gptsovits import layout
from scripts.common.build.workdir import WorkDir
from scripts.gptsovits.pipeline.sources import AuxRef, Sources
from scripts.gptsovits.shapes import GraphShapes, ReferenceShapes

T = TypeVar("T")
T2S_PREFIX = "t2s_"


@dataclass(frozen=True)
class Settings:
    """What the build was asked for besides its sources (build.py options)."""

    voice: str
    target: str
    out: Path
    compiler: str = "local"
    qnn_cache: Path | None = None
    sim_gates: bool = True
    #: the reference's transcript (None: its norm_text in 2-name2text)
    ref_text: str | None = None
    #: --aux-ref references, averaged into the voice's style (aux_refs.py)
    aux_refs: tuple[AuxRef, ...] = ()

    @property
    def tar(self) -> Path:
        return self.out.with_name(self.out.name + ".tar")


class BuildContext(WorkDir):
    """One build's inputs and paths (the stages' ``ctx``)."""

    def __init__(
        self,
        src: Sources,
        shapes: GraphShapes,
        work: Path,
        settings: Settings,
        reference: ReferenceShapes | None = None,
    ) -> None:
        super().__init__(work)
        self.src, self.shapes, self.settings = src, shapes, settings
        #: the zero-shot graphs' shapes (--hubert + --sv), else None
        self.reference = reference
        self.text_dir = self.stage / layout.TEXT_DIR
        self.cpu_dir = self.stage / "cpu"
        self._loaded: dict[tuple[Hashable, ...], Any] = {}

    def loaded(self, load: Callable[..., T], *args: Hashable) -> T:
        """``load(*args)``, once per run (the models every stage shares)."""
        key = (load, *args)
        if key not in self._loaded:
            self._loaded[key] = load(*args)
        return self._loaded[key]

    # graphs -----------------------------------------------------------------
    def decode_keys(self) -> list[str]:
        return [layout.t2s_decode_key(n) for n in self.shapes.kv_buckets]

    def t2s_keys(self) -> list[str]:
        return [layout.T2S_PREFILL, *self.decode_keys()]

    def reference_keys(self) -> list[str]:
        return list(layout.REFERENCE_GRAPHS) if self.reference else []

    def graph_keys(self) -> list[str]:
        """Every graph of the bundle, in its order."""
        return [
            layout.G2PW,
            layout.BERT,
            *self.t2s_keys(),
            layout.VITS_ENC,
            layout.VITS_GEN,
            *self.reference_keys(),
        ]

    def npu_source(self, key: str) -> Path:
        """The ONNX compiled for the NPU: the float16-K/V twin of a T2S graph,
        the fp32 graph of every other."""
        return self.npu_onnx_path(key) if key.startswith(T2S_PREFIX) else self.onnx(key)

    def ref_path(self) -> Path:
        return self.stage / layout.ref_file(self.settings.voice)
