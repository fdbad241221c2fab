"""build_voice ``--hubert DIR --sv CKPT``: the four reference-side graphs of a
zero-shot bundle (what voice cloning runs on), exported, gated and sized here; compiled
and bundled with the other graphs by build_voice.py.

    hubert, ssl_quant   scripts/gptsovits/export/hubert.py (gates: verify/hubert.py)
    ref_enc, sv         scripts/gptsovits/export/reference.py
                        (gates: verify/reference.py)

The bundle then carries ``params.reference`` (their static sizes) and the engine
declares ``Capabilities.cloning`` (daemon/engines/gptsovits/reference/clone.py).
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from daemon.engines.gptsovits import layout
from daemon.engines.gptsovits.reference.params import ReferenceParams
from scripts.gptsovits.export.shapes import ReferenceShapes

if TYPE_CHECKING:
    from transformers import HubertModel

    from scripts.common.build.runners import Simulator
    from scripts.gptsovits.models.eres2net import ERes2NetV2
    from scripts.gptsovits.models.sovits import SovitsModel


class ReferenceGraphs:
    """The four graphs' work over one build's sources (models load lazily)."""

    keys = layout.REFERENCE_GRAPHS

    def __init__(
        self,
        hubert_dir: Path,
        sv_ckpt: Path,
        sovits: Any,  # a callable giving the build's SovitsModel (loaded once)
        shapes: ReferenceShapes,
        onnx_dir: Path,
    ) -> None:
        self.hubert_dir, self.sv_ckpt = Path(hubert_dir), Path(sv_ckpt)
        self._sovits, self.shapes, self.onnx_dir = sovits, shapes, Path(onnx_dir)

    @property
    def sovits(self) -> SovitsModel:
        return self._sovits()

    @cached_property
    def hubert(self) -> HubertModel:
        from scripts.gptsovits.export.hubert import load_hubert

        return load_hubert(self.hubert_dir)

    @cached_property
    def sv(self) -> ERes2NetV2:
        from scripts.gptsovits.models.eres2net import load_sv_checkpoint

        return load_sv_checkpoint(self.sv_ckpt)

    def onnx(self, key: str) -> Path:
        return self.onnx_dir / f"{key}.onnx"

    def outputs(self) -> list[Path]:
        return [self.onnx(key) for key in self.keys]

    def params(self) -> ReferenceParams:
        s = self.shapes
        return ReferenceParams(
            hubert_samples=s.hubert_samples,
            spec_frames=s.spec_frames,
            fbank_frames=s.fbank_frames,
            sv_dim=self.sovits.dims.sv,
        )

    # steps ------------------------------------------------------------------
    def export(self) -> dict:
        from scripts.gptsovits.export.hubert import export_hubert
        from scripts.gptsovits.export.reference import export_reference

        self.onnx_dir.mkdir(parents=True, exist_ok=True)
        specs = export_hubert(self.hubert, self.sovits, self.shapes, self.onnx_dir)
        specs += export_reference(self.sovits, self.sv, self.shapes, self.onnx_dir)
        made = {spec.path.stem for spec in specs}
        if made != set(self.keys):
            raise ValueError(f"reference export made {sorted(made)}, not {self.keys}")
        return {"sv_dim": self.sovits.dims.sv, "window": self.shapes.hubert_samples}

    def gates_cpu(self) -> dict[str, float]:
        from scripts.gptsovits.verify.hubert import gate_hubert_cpu
        from scripts.gptsovits.verify.reference import gate_reference_cpu

        out = dict(
            gate_hubert_cpu(
                self.hubert, self.sovits,
                self.onnx(layout.HUBERT), self.onnx(layout.SSL_QUANT), self.params(),
            )
        )  # fmt: skip
        out.update(
            gate_reference_cpu(
                self.sovits, self.sv,
                self.onnx(layout.REF_ENC), self.onnx(layout.SV), self.params(),
            )
        )  # fmt: skip
        return out

    def gates_sim(self, sim: Simulator, bins: dict[str, Path]) -> dict[str, Any]:
        from scripts.gptsovits.verify.hubert import gate_hubert_sim
        from scripts.gptsovits.verify.reference import gate_reference_sim

        res = dict(
            gate_hubert_sim(
                sim, bins, self.onnx(layout.HUBERT), self.onnx(layout.SSL_QUANT),
                self.params(), self.sovits,
            )
        )  # fmt: skip
        res.update(
            gate_reference_sim(
                sim, bins, self.onnx(layout.REF_ENC), self.onnx(layout.SV),
                self.params(),
            )
        )  # fmt: skip
        return res
