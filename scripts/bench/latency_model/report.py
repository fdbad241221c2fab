"""The board model's printed report (markdown); every title says ESTIMATE."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from scripts.bench.latency_model import engines as eng
from scripts.bench.latency_model.calibrate import (
    VARIANTS,
    FitRow,
    best,
    fit_table,
    roofline,
)
from scripts.bench.latency_model.fit import BoardModel, fit
from scripts.bench.latency_model.port import (
    OUR_GRAPH,
    PORT_COSTS,
    TIMINGS,
    port_io_bytes,
    port_points,
)

_UNITS = {
    "macs": ("TMAC/s", 1e12),
    "mm_macs": ("MatMul TMAC/s", 1e12),
    "conv_macs": ("conv TMAC/s", 1e12),
    "bytes": ("GB/s", 1e9),
    "weight_bytes": ("weights GB/s", 1e9),
    "io_bytes": ("I/O GB/s", 1e9),
    "elementwise": ("Gelem/s", 1e9),
}
GSV_NOTE = (
    "Shape differences from the port's graphs: our t2s_decode takes k_cache "
    "[24,16,L,32] fp16 (port kT_cache [24,16,32,L] fp32) and returns fp16 k/v; our "
    "vits_gen has a frame-mask input; our g2pw body is a torch BertModel export "
    "(port: surgery on g2pW.onnx), same layers and sizes. The fit uses our MACs and "
    "weights with the port's own float32 I/O bytes (port.py PORT_IO). "
    "t2s_decode_768* is derived: the port's 'L=768 measured 15 % faster'."
)

OVERHEAD_NOTE = (
    "Host time (frontend, sampling, KV copies) is not in these numbers. The fitted "
    "per-call overhead is poorly constrained: no port graph is small (the shortest, "
    "t2s_decode, moves 250 MB), so the fit puts whatever the bytes at peak bandwidth "
    "do not explain into it. Schedules of many small calls (Qwen3-TTS's 16 cp_step "
    "per frame, Piper) are dominated by it; the column above says by how much."
)


def _rates(m: BoardModel) -> str:
    parts = [f"o {m.overhead_s * 1e3:.2f} ms"]
    for k, r in m.rates.items():
        unit, scale = _UNITS[k]
        parts.append(f"{'∞' if math.isinf(r) else f'{r / scale:.3g}'} {unit}")
    return ", ".join(parts)


def _pct(x: float) -> str:
    return f"{x * 100:+.0f} %"


def port_table() -> list[str]:
    out = [
        "## Reference-port graphs (fit points; our counts, ESTIMATE inputs)",
        "",
        "| graph | GMAC (conv) | weights MB | port I/O MB | profiled ms "
        "| dispatch ms |",
        "|---|---|---|---|---|---|",
    ]
    for g, ms in TIMINGS["profiled"].items():
        c = PORT_COSTS[OUR_GRAPH[g]]
        out.append(
            f"| {g} | {c.macs / 1e9:.2f} ({c.conv_macs / 1e9:.2f}) | "
            f"{c.weight_bytes / 1e6:.1f} | {port_io_bytes(g) / 1e6:.1f} | {ms} | "
            f"{TIMINGS['dispatch'][g]} |"
        )
    return [*out, "", GSV_NOTE, ""]


def fit_section(
    timings: str, rows: Sequence[FitRow], chosen: tuple[str, str]
) -> list[str]:
    """``chosen``: the (variant, form) the predictions use."""
    sel = next(r for r in rows if (r.variant, r.model.form) == chosen)
    roof = roofline(rows)
    out = [
        f"## Fit to the {timings} timings (ESTIMATE model)",
        "",
        "| model | parameters | fit RMS | LOO RMS |",
        "|---|---|---|---|",
    ]
    for r in rows:
        mark = " **(selected)**" if r is sel else " (roofline)" if r is roof else ""
        out.append(
            f"| {r.variant}/{r.model.form}{mark} | {_rates(r.model)} | "
            f"{r.fit_rms * 100:.0f} % | {r.loo_rms * 100:.0f} % |"
        )
    names = [p.name for p in sel.points]
    out += [
        "",
        "Leave-one-out relative error per point (predicted − measured) / measured:",
        "",
        "| model | " + " | ".join(names) + " |",
        "|---" * (len(names) + 1) + "|",
    ]
    for r in [sel] if roof is sel else [sel, roof]:
        out.append(
            f"| {r.variant}/{r.model.form} | "
            + " | ".join(_pct(e) for e in r.loo)
            + " |"
        )
    return [*out, ""]


def dispatch_section(sel_variant: str, sel_form: str) -> list[str]:
    feats = VARIANTS[sel_variant]
    o = {
        t: fit(port_points(ms), feats, sel_form).overhead_s for t, ms in TIMINGS.items()
    }
    diffs = {
        g: TIMINGS["dispatch"][g] - TIMINGS["profiled"][g] for g in TIMINGS["profiled"]
    }
    med = sorted(diffs.values())[len(diffs) // 2]
    return [
        "## Python-dispatch overhead the difference implies (ESTIMATE)",
        "",
        "per graph, dispatch − profiled: "
        + ", ".join(f"{g} {d:+.2f} ms" for g, d in diffs.items())
        + f" (median {med:+.2f} ms; t2s_prefill's +29 ms is the port copying its "
        "50 MB float32 k/v out, not per-call dispatch)",
        f"fitted per-call overhead ({sel_variant}/{sel_form} fitted to both): "
        f"{o['profiled'] * 1e3:.2f} ms profiled, "
        f"{o['dispatch'] * 1e3:.2f} ms dispatch, "
        f"difference {(o['dispatch'] - o['profiled']) * 1e3:+.2f} ms per call",
        "",
    ]


def engine_section(g: eng.EngineGraphs, models: dict[str, BoardModel]) -> list[str]:
    out = [
        f"## {g.engine}: every graph, ESTIMATED ms per call",
        "",
        f"Graphs: {g.source}.",
        "",
        "| graph | GMAC | attn GMAC | conv GMAC | weights MB | I/O MB | KV MB | "
        "est. ms (profiled fit) | est. ms (dispatch fit) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for k, c in g.costs.items():
        ms = [models[t].seconds(c.features()) * 1e3 for t in ("profiled", "dispatch")]
        out.append(
            f"| {k} | {c.macs / 1e9:.3f} | {c.attention_macs / 1e9:.3f} | "
            f"{c.conv_macs / 1e9:.3f} | {c.weight_bytes / 1e6:.1f} | "
            f"{c.io_bytes / 1e6:.2f} | {c.kv_bytes / 1e6:.1f} | "
            f"{ms[0]:.2f} | {ms[1]:.2f} |"
        )
    return [*out, ""]


def voice_rows(
    gs: Sequence[eng.EngineGraphs], models: dict[str, BoardModel]
) -> list[str]:
    out = [
        "## Predicted RTF and time to first audio, 3-sentence text "
        "(ESTIMATE, NPU time only)",
        "",
        "| voice | audio s | RTF est. (profiled / dispatch) | TTFA est. s "
        "(profiled / dispatch) | of RTF: per-call overhead | calls | assumptions |",
        "|---|---|---|---|---|---|---|",
    ]
    for g in gs:
        s = g.schedule
        per = {
            t: {k: m.seconds(c.features()) for k, c in g.costs.items()}
            for t, m in models.items()
        }
        calls = ", ".join(f"{k}×{n}" for k, n in s.total.items())
        o = models["profiled"].overhead_s * sum(s.total.values())
        share = o / s.seconds(per["profiled"])
        out.append(
            f"| {s.voice} | {s.audio_s:.2f} | {s.rtf(per['profiled']):.3f} / "
            f"{s.rtf(per['dispatch']):.3f} | {s.ttfa(per['profiled']):.3f} / "
            f"{s.ttfa(per['dispatch']):.3f} | {share * 100:.0f} % | {calls} | "
            f"{'; '.join(s.notes)} |"
        )
    return [*out, "", OVERHEAD_NOTE, ""]


def recount_section(work: Path) -> list[str]:
    g = eng.gsv(work, eng.CostCache(work / eng.CACHE_FILE))
    out = [
        "## Recount of the ESTIMATE inputs (full_size/gptsovits.py export vs "
        "PORT_COSTS)",
        "",
    ]
    for name, want in PORT_COSTS.items():
        have = g.costs[name]
        out.append(f"- {name}: {'same' if have == want else f'DIFFERS: {have}'}")
    return [*out, ""]


def full_report(work: Path, names: Sequence[str], recount: bool = False) -> str:
    unknown = set(names) - set(eng.ENGINES)
    if unknown:
        raise SystemExit(
            f"unknown engines {sorted(unknown)}; known {sorted(eng.ENGINES)}"
        )
    lines = ["# Board latency model — ESTIMATE for QCS8550 (HTP v73, fp16)", ""]
    lines += port_table()
    tables = {t: fit_table(port_points(ms), t) for t, ms in TIMINGS.items()}
    # one model form (selected on the profiled timings, the cleaner clock),
    # calibrated on each set: their difference is the dispatch
    sel = best(tables["profiled"])
    for t, rows in tables.items():
        lines += fit_section(t, rows, (sel.variant, sel.model.form))
        lines += [f"(rule's own pick on this set: {best(rows).model.label})", ""]
    models = {
        t: next(
            r.model
            for r in rows
            if (r.variant, r.model.form) == (sel.variant, sel.model.form)
        )
        for t, rows in tables.items()
    }
    lines += [
        f"Predictions use {sel.variant}/{sel.model.form} (selected on the profiled "
        "timings) calibrated on each timing set.",
        "",
    ]
    lines += dispatch_section(sel.variant, sel.model.form)
    if recount:
        lines += recount_section(work)
    cache = eng.CostCache(work / eng.CACHE_FILE)
    graphs = [eng.ENGINES[n](work, cache) for n in names]
    for g in graphs:
        lines += engine_section(g, models)
    lines += voice_rows(graphs, models)
    return "\n".join(lines)
