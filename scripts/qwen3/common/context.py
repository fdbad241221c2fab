"""What every stage of a Qwen3 build reads: its options and its work dir.

``Qwen3Options`` holds the options the Qwen3 builds share (each build's
options extend it with their defaults and their own); ``Qwen3Context`` is the
work dir (scripts/common/build/workdir.py) with those options, the sorted
buckets and the bundle's paths.  A build's context adds its model and its
graphs (``graph_keys``, ``npu_onnx``).  Imports nothing of the build, so the
stages that read a context are keyed by their own code only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scripts.common.build.workdir import WorkDir

#: the bundle's manifest, whose presence says the bundle stage finished
MANIFEST = "voice.yaml"


@dataclass(frozen=True)
class Qwen3Options:
    model: Path
    target: str
    out: Path
    prefill_buckets: tuple[int, ...]
    kv_buckets: tuple[int, ...]
    name: str | None = None
    work: Path | None = None
    qnn_cache: Path | None = None
    #: None: on for --target simulator, off for a board target
    sim_gates: bool | None = None
    #: the fp32 graphs in onnx/ for the CPU backend (at full size a few GB:
    #: a board bundle can leave them out)
    onnx: bool = True

    @property
    def run_sim_gates(self) -> bool:
        """--sim-gates as given, else on for --target simulator only."""
        return self.target == "simulator" if self.sim_gates is None else self.sim_gates

    @property
    def work_dir(self) -> Path:
        """--work, else OUT.work beside the bundle."""
        return Path(self.work or self.out.with_name(self.out.name + ".work"))

    @property
    def tar(self) -> Path:
        """The packed bundle, OUT.tar beside it."""
        return self.out.with_name(self.out.name + ".tar")


class Qwen3Context(WorkDir):
    """One build's work dir, options and buckets (each sorted, once)."""

    def __init__(self, opts: Qwen3Options, model_name: str) -> None:
        super().__init__(opts.work_dir)
        self.opts = opts
        self.prefill_buckets = tuple(sorted(set(opts.prefill_buckets)))
        self.kv_buckets = tuple(sorted(set(opts.kv_buckets)))
        #: the bundle's name: --name, else the model directory's
        self.name = opts.name or model_name

    def graph_keys(self) -> list[str]:
        """Every graph of the bundle, in manifest order."""
        raise NotImplementedError

    def npu_onnx(self, key: str) -> Path:
        """The graph compiled for the NPU (its own where it differs)."""
        raise NotImplementedError

    def bundle_outputs(self) -> list[Path]:
        return [self.opts.out / MANIFEST, self.opts.tar]
