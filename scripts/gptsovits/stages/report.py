"""The build summary's per-graph rows (scripts/common/build/report.py prints
them under the stage table): each binary's size and compile time, and its
graphs' CPU and simulator gates, from the stages' typed results."""

from __future__ import annotations

from collections.abc import Mapping

from daemon.engines.gptsovits import layout
from scripts.common.build.compile import GROUP, compiled
from scripts.common.build.run import StageRun
from scripts.gptsovits.stages.gates_cpu import KV16
from scripts.gptsovits.verify.sim import SimResult

HEADER = ("graph", "bin MB", "compile s", "CPU gate", "sim gate", "sim s/call")
#: the CPU gate shown per graph kind: label, the measured value's name
CPU_METRICS = {
    layout.VITS_ENC: ("rel", "vits_enc_rel_err"),
    layout.VITS_GEN: ("SNR", "vits_gen_snr_db"),
    layout.BERT: ("rel", "bert_rel_err"),
    layout.G2PW: ("rel", "g2pw_rel_err"),
}
NONE = "-"


def graph_rows(run: StageRun) -> list[tuple[str, ...]]:
    """One row per bundle binary (header first)."""
    units = compiled(run.results.get(GROUP) or {})
    cpu: Mapping[str, float] = run.results.get("gates_cpu") or {}
    sim: Mapping[str, SimResult] = run.results.get("gates_sim") or {}
    rows: list[tuple[str, ...]] = [HEADER]
    for key, unit in units.items():
        gate = sim.get(key)
        calls = gate.seconds if gate else []
        seconds = unit.compile_seconds
        rows.append(
            (
                key,
                f"{unit.bytes / 1e6:.2f}",
                NONE if seconds is None else f"{seconds:.1f}",
                cpu_metric(key, cpu),
                f"{gate.metric} {gate.value:.4g}" if gate else NONE,
                f"{sum(calls) / len(calls):.2f}" if calls else NONE,
            )
        )
    return rows


def cpu_metric(key: str, cpu: Mapping[str, float]) -> str:
    """The CPU gate of graph (or binary) ``key`` as a table cell."""
    if key.startswith(layout.T2S_DECODE_PREFIX):
        n = key[len(layout.T2S_DECODE_PREFIX) :]
        return f"rel {cpu.get(f'{KV16}t2s_L{n}_rel_err', float('nan')):.2g}"
    if key == layout.T2S_PREFILL:
        t2s = [v for k, v in cpu.items() if k.endswith("_rel_err") and "t2s" in k]
        return f"rel {max(t2s):.2g}" if t2s else NONE
    label, metric = CPU_METRICS.get(key, ("", ""))
    return f"{label} {cpu[metric]:.4g}" if metric in cpu else NONE
