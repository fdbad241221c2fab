"""Compile an ONNX graph into a QNN HTP context binary with onnxruntime's QNN EP.

One ``.bin`` per ONNX graph (EPContext generation, ``ep.context_embed_mode=0``),
fp16 on HTP v73.  CPU fallback is disabled, so an op the HTP cannot run fails the
compile instead of silently staying on the CPU.

    python -m scripts.common.qnn_compile model.onnx --out DIR \
        [--target qcs8550|simulator]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from qnnrt import native_stdout

_LOGGER = logging.getLogger(__name__)

QNN_EP: Final = "QNNExecutionProvider"
#: target → QNN EP provider options.  QCS8550 binaries are built for SM8550
#: (soc_model 43, v73), which loads on a real QCS8550 (SoC 66; docs/board.md,
#: board setup); the x86 simulator runs the same v73 binaries.
TARGETS: Final[dict[str, dict[str, str]]] = {
    "qcs8550": {"htp_arch": "73", "soc_model": "43"},
    "simulator": {"htp_arch": "73", "soc_model": "43"},
}
COMMON_OPTIONS: Final = {"backend_type": "htp", "enable_htp_fp16_precision": "1"}
_CACHE_FORMAT: Final = 1
_HASH_CHUNK: Final = 1 << 20
#: onnxruntime's OrtLoggingLevel values (onnxruntime_c_api.h).
ORT_WARNING: Final = 2
ORT_ERROR: Final = 3


class CompileError(RuntimeError):
    """The QNN EP could not turn the graph into one context binary."""


@dataclass(frozen=True)
class Compiled:
    bin_path: Path
    ctx_onnx_path: Path
    target: str
    qnn_sdk_version: str
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["bin_path"], d["ctx_onnx_path"] = str(self.bin_path), str(self.ctx_onnx_path)
        return d


def qnn_sdk_version() -> str:
    """QNN SDK version of the installed onnxruntime-qnn (e.g. ``2.51.0``)."""
    from onnxruntime_qnn import build_and_package_info as info

    return str(info.qnn_version)


def register_devices(ort: Any) -> list[Any]:
    import onnxruntime_qnn

    names = {d.ep_name for d in ort.get_ep_devices()}
    if QNN_EP not in names:
        ort.register_execution_provider_library(
            QNN_EP, onnxruntime_qnn.get_library_path()
        )
    return [d for d in ort.get_ep_devices() if d.ep_name == QNN_EP]


def session_options(ort: Any) -> Any:
    """Session options whose onnxruntime log stays quiet unless debugging: on a
    good compile the QNN EP warns twice per session ("File mapped weights feature
    is only available on Windows arm64", "EPContext encryption config
    unavailable"), in raw terminal colours, with nothing to act on; errors still
    print and raise."""
    so = ort.SessionOptions()
    debugging = logging.getLogger("scripts").isEnabledFor(logging.DEBUG)
    so.log_severity_level = ORT_WARNING if debugging else ORT_ERROR
    return so


def qnn_session(ctx_onnx: str | Path, target: str = "simulator") -> Any:
    """An onnxruntime session running a compiled EPContext model on the QNN EP."""
    import onnxruntime as ort

    so = session_options(ort)
    so.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    so.add_provider_for_devices(
        register_devices(ort)[:1], {**COMMON_OPTIONS, **TARGETS[target]}
    )
    with native_stdout():
        return ort.InferenceSession(str(ctx_onnx), so)


def compile_onnx(
    onnx_path: str | Path,
    out_dir: str | Path,
    *,
    name: str | None = None,
    target: str = "simulator",
    cache_dir: str | Path | None = None,
) -> Compiled:
    """Compile ``onnx_path`` to ``out_dir/<name>.bin`` (+ ``<name>.ctx.onnx``)."""
    if target not in TARGETS:
        raise ValueError(f"target {target!r}: expected one of {sorted(TARGETS)}")
    onnx_path, out_dir = Path(onnx_path), Path(out_dir)
    name = name or onnx_path.stem
    out_dir.mkdir(parents=True, exist_ok=True)
    if cache_dir is not None:
        key = onnx_cache_key(onnx_path, target)
        hit = Path(cache_dir) / key
        if (hit / "meta.json").is_file():
            return _copy_out(
                hit, out_dir, name, json.loads((hit / "meta.json").read_text())
            )
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="qnn_compile_") as tmp:
        work = Path(tmp)
        _compile_into(onnx_path, work, target)
        meta = {
            "target": target,
            "qnn_sdk_version": qnn_sdk_version(),
            "seconds": round(time.perf_counter() - t0, 3),
        }
        if cache_dir is not None:
            _publish(work, meta, Path(cache_dir), hit)
        result = _copy_out(work, out_dir, name, meta)
    _LOGGER.info(
        "compiled %s -> %s in %.1f s", onnx_path.name, result.bin_path, meta["seconds"]
    )
    return result


def _publish(work: Path, meta: dict, cache_dir: Path, hit: Path) -> None:
    """Copy a compile into the cache as ``hit``, atomically: parallel test
    workers never see half of one, and two that compiled the same key at once
    each stage under their own name (the first rename wins, the other's copy
    is dropped: both are the same compile)."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(prefix=f".{hit.name}.", dir=cache_dir))
    shutil.copytree(work, staged, dirs_exist_ok=True)
    (staged / "meta.json").write_text(json.dumps(meta))
    try:  # fails if hit exists: never replace what a reader may be copying
        staged.rename(hit)
    except OSError:
        shutil.rmtree(staged, ignore_errors=True)


def onnx_cache_key(onnx_path: Path, target: str) -> str:
    from scripts.common.onnx_data import external_files

    h = hashlib.sha256()
    h.update(onnx_path.read_bytes())
    # a model past 2 GB keeps its weights beside the graph (none: the key of a
    # self-contained model is what it always was)
    for data in external_files(onnx_path):
        h.update(data.name.encode())
        with open(data, "rb") as f:
            while chunk := f.read(_HASH_CHUNK):
                h.update(chunk)
    h.update(
        json.dumps([_CACHE_FORMAT, target, TARGETS[target], qnn_sdk_version()]).encode()
    )
    return h.hexdigest()[:32]


def _compile_into(onnx_path: Path, work: Path, target: str) -> None:
    import onnx
    import onnxruntime as ort

    ctx = work / "model.ctx.onnx"
    so = session_options(ort)
    so.add_session_config_entry("ep.context_enable", "1")
    so.add_session_config_entry("ep.context_embed_mode", "0")
    so.add_session_config_entry("ep.context_file_path", str(ctx))
    so.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    so.add_provider_for_devices(
        register_devices(ort)[:1], {**COMMON_OPTIONS, **TARGETS[target]}
    )
    try:
        with native_stdout():
            ort.InferenceSession(str(onnx_path), so)
    except Exception as exc:  # onnxruntime raises its own exception types
        raise CompileError(f"QNN EP could not compile {onnx_path.name}: {exc}") from exc
    model = onnx.load(str(ctx), load_external_data=False)
    ep_nodes = [n for n in model.graph.node if n.op_type == "EPContext"]
    others = [
        f"{n.op_type} ({n.name})" for n in model.graph.node if n.op_type != "EPContext"
    ]
    if len(ep_nodes) != 1 or others:
        raise CompileError(
            f"{onnx_path.name}: expected the whole graph in one QNN context, got "
            f"{len(ep_nodes)} EPContext node(s) and non-QNN nodes {others}"
        )
    bins = list(work.glob("*.bin"))
    if len(bins) != 1:
        raise CompileError(f"{onnx_path.name}: expected one .bin, found {bins}")
    bins[0].rename(work / "model.bin")
    for attr in ep_nodes[0].attribute:
        if attr.name == "ep_cache_context":
            attr.s = b"model.bin"
    onnx.save(model, str(ctx))


def _copy_out(src: Path, out_dir: Path, name: str, meta: dict[str, Any]) -> Compiled:
    import onnx

    bin_path, ctx_path = out_dir / f"{name}.bin", out_dir / f"{name}.ctx.onnx"
    shutil.copyfile(src / "model.bin", bin_path)
    model = onnx.load(str(src / "model.ctx.onnx"), load_external_data=False)
    for node in model.graph.node:
        for attr in node.attribute:
            if attr.name == "ep_cache_context":
                attr.s = bin_path.name.encode()
    onnx.save(model, str(ctx_path))
    return Compiled(
        bin_path, ctx_path, meta["target"], meta["qnn_sdk_version"], meta["seconds"]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.common.qnn_compile")
    parser.add_argument("onnx", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--target", choices=sorted(TARGETS), default="simulator")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for i, path in enumerate(args.onnx, 1):
        print(
            f"[{i}/{len(args.onnx)}] compiling {path} ...", file=sys.stderr, flush=True
        )
        try:
            res = compile_onnx(path, args.out, target=args.target)
        except CompileError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(json.dumps(res.to_dict()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
