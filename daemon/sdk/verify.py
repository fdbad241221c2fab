"""What a voice bundle is checked for: the one check behind ``hexvoice bundle
verify``, ``serve``'s start check and ``hexvoice doctor --bundle``.

1. every hashed file is present and unchanged (each file hashed once, however
   many graphs it holds);
2. (``binaries``) each graph entry's binary holds the graph it names (or, with no
   name, exactly one graph) with the manifest's I/O; each binary is compiled for
   the HTP the bundle declares (``target``, a board profile name) and, on a
   board, for this board (its profile, detected from the SoC id);
3. the manifest's ``task`` is its engine's (a TTS engine never loads an ASR
   bundle), and the manifest has every graph, tensor and shape its engine runs
   (``Engine.requirements``, the declaration the engine's ``load`` checks).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from daemon.sdk.bundles.manifest import (
    MANIFEST,
    Bundle,
    BundleError,
    GraphSpec,
    TensorSpec,
    sha256_file,
    tensor_spec,
)
from daemon.sdk.bundles.needs import unmet
from daemon.sdk.registry import engine_for
from daemon.targets.profile import Htp, Profile, available, load_profile

if TYPE_CHECKING:
    import qnnrt

_MB: Final = 1 << 20


class TargetMismatch(str):
    """A problem that needs a recompile, not a recopy: a binary built for another
    HTP (arch, SoC model, VTCM) than the bundle's target or this board."""


def verify_bundle(
    bundle: Bundle,
    *,
    binaries: bool = True,
    lib: Any = None,
    board: Profile | None = None,
) -> list[str]:
    """Every problem found (empty list = intact): hashes; with ``binaries`` each
    graph against its binary and each binary's HTP (against ``target`` and, on a
    board, the board: ``board`` or the one detected); then the engine's graphs.
    ``lib``: the ``qnnrt.QnnLibrary`` to read binaries with (default: found)."""
    problems = []
    for rel, digest in _hashed(bundle):
        p = bundle.path(rel)
        if not p.is_file():
            problems.append(f"{rel}: missing")
        elif sha256_file(p) != digest:
            problems.append(f"{rel}: sha256 mismatch (file changed or corrupted)")
    wrong_io: set[str] = set()
    if binaries:
        damaged = {p.split(":")[0] for p in problems}
        infos = {}
        for file in bundle.binaries:
            if file in damaged:
                continue
            found = read_binary(bundle, file, lib)
            specs = [g for g in bundle.graphs.values() if g.file == file]
            if isinstance(found, str):
                problems.append(found)
                wrong_io.update(g.key for g in specs)
                continue
            infos[file] = found
            for spec in specs:
                mismatch = graph_problems(spec, found)
                if mismatch:
                    problems += mismatch
                    wrong_io.add(spec.key)
        problems += target_problems(bundle, infos, board or detect_board())
    # A graph whose manifest I/O the binary contradicts is reported once, above.
    return problems + engine_problems(bundle, skip=wrong_io)


def _hashed(bundle: Bundle) -> Iterable[tuple[str, str]]:
    yield from bundle.binaries.items()
    for g in bundle.graphs.values():
        if g.onnx and g.onnx_sha256:
            yield g.onnx, g.onnx_sha256
    yield from bundle.files.items()


def read_binary(bundle: Bundle, file: str, lib: Any) -> qnnrt.BinaryInfo | str:
    """A binary's metadata, or why it cannot be read."""
    import qnnrt

    try:
        return qnnrt.read_binary_info(bundle.path(file), lib)
    except (OSError, ValueError, qnnrt.QnnError) as exc:
        return f"{file}: not a loadable context binary: {exc}"


def find_graph(spec: GraphSpec, info: qnnrt.BinaryInfo) -> qnnrt.GraphInfo | str:
    """The graph ``spec`` names in its binary, or why there is none."""
    names = [g.name for g in info.graphs]
    where = f"{spec.file} ({spec.key})"
    if spec.graph is None:
        if len(info.graphs) == 1:
            return info.graphs[0]
        return (
            f"{where}: {len(info.graphs)} graphs {names}; the manifest must name "
            f"one (graph:)"
        )
    for g in info.graphs:
        if g.name == spec.graph:
            return g
    return f"{where}: no graph {spec.graph!r} in the binary; it holds {names}"


def graph_problems(spec: GraphSpec, info: qnnrt.BinaryInfo) -> list[str]:
    """Where graph entry ``spec`` and its binary disagree: the graph, its I/O."""
    gi = find_graph(spec, info)
    if isinstance(gi, str):
        return [gi]
    where = f"{spec.file} ({spec.key})"
    problems = _compare(f"{where} inputs", spec.inputs, gi.inputs)
    return problems + _compare(f"{where} outputs", spec.outputs, gi.outputs)


def _compare(what: str, want: tuple[TensorSpec, ...], got: Iterable[Any]) -> list[str]:
    have = tuple(tensor_spec(t) for t in got)
    if sorted(want, key=lambda t: t.name) == sorted(have, key=lambda t: t.name):
        if what.endswith("outputs") and want != have:
            return [
                f"{what}: order {[t.name for t in have]} differs from manifest "
                f"{[t.name for t in want]} (outputs are read by index)"
            ]
        return []
    want_d = {t.name: t for t in want}
    have_d = {t.name: t for t in have}
    out = []
    for name in sorted(set(want_d) | set(have_d)):
        w, h = want_d.get(name), have_d.get(name)
        if w is None:
            out.append(f"{what}: binary has {name!r}, manifest does not")
        elif h is None:
            out.append(f"{what}: manifest has {name!r}, binary does not")
        elif w != h:
            out.append(
                f"{what}: {name!r} is {h.dtype}{list(h.shape)} in the binary, "
                f"{w.dtype}{list(w.shape)} in the manifest"
            )
    return out


# --- which HTP the binaries are for ------------------------------------------
def detect_board(root: Path = Path("/")) -> Profile | None:
    """The profile whose SoC id this machine's sysfs reports; None off a board
    (the x86 simulator: there the bundle's declared target is the check)."""
    for name in available():
        p = load_profile(name)
        if p.soc is None:
            continue
        try:
            soc_id = (root / p.soc.sysfs_path.lstrip("/")).read_text().strip()
        except OSError:
            continue
        if soc_id == str(p.soc.soc_id):
            return p
    return None


def expected_htps(
    bundle: Bundle, board: Profile | None
) -> tuple[list[tuple[str, Htp]], list[TargetMismatch]]:
    """(who expects, what HTP) in check order: the declared target, then the
    board; plus the problem of a declared target no profile describes."""
    out, problems = [], []
    known = available()  # profile names only: a target is never a path
    if bundle.target in known:
        htp = load_profile(bundle.target).htp
        out.append((f"bundle target {bundle.target!r}", htp))
    elif bundle.target is not None:
        problems.append(
            TargetMismatch(
                f"{MANIFEST}: target {bundle.target!r} is not a known HTP target "
                f"({', '.join(known)}); its binaries cannot be checked"
            )
        )
    if board is not None:
        out.append((f"this board ({board.name})", board.htp))
    return out, problems


def htp_problems(file: str, info: qnnrt.BinaryInfo, who: str, htp: Htp) -> list[str]:
    """Where ``info`` (a binary's metadata) is not for ``htp``; a value the
    metadata lacks (BinaryInfo before v3) cannot be compared and is skipped."""
    found = []
    if info.dsp_arch is not None and info.dsp_arch != htp.arch:
        found.append(
            f"{file}: compiled for HTP v{info.dsp_arch}, {who} is HTP v{htp.arch}"
        )
    if info.soc_model is not None and info.soc_model not in htp.binary_soc_models:
        found.append(
            f"{file}: compiled for SoC model {info.soc_model}, {who} accepts "
            f"{list(htp.binary_soc_models)}"
        )
    vtcm = max((g.vtcm_bytes for g in info.graphs), default=0)
    if vtcm > htp.vtcm_bytes:
        found.append(
            f"{file}: needs {vtcm // _MB} MB VTCM, {who} has {htp.vtcm_bytes // _MB} MB"
        )
    return found


def target_problems(
    bundle: Bundle, infos: Mapping[str, qnnrt.BinaryInfo], board: Profile | None
) -> list[TargetMismatch]:
    """Every binary (``infos``: file -> its metadata) against the declared target,
    then the board; per binary only the first expectation it misses (one line
    per fault, not one per check)."""
    expected, problems = expected_htps(bundle, board)
    for file, info in infos.items():
        for who, htp in expected:
            found = htp_problems(file, info, who, htp)
            if found:
                problems += [TargetMismatch(p) for p in found]
                break
    return problems


# --- what the engine runs ----------------------------------------------------
def engine_problems(bundle: Bundle, skip: Set[str] = frozenset()) -> list[str]:
    """The manifest's task and graphs (but ``skip``) against its engine's."""
    where = f"{MANIFEST} ({bundle.engine})"
    try:
        cls = engine_for(bundle)
    except BundleError as exc:
        return [str(exc)]
    except LookupError as exc:
        return [f"{MANIFEST}: {exc}"]
    except ImportError as exc:
        return [f"{MANIFEST}: engine {bundle.engine!r} cannot be imported: {exc}"]
    requirements = getattr(cls, "requirements", None)
    if requirements is None:
        return [f"{where}: the engine does not declare its graphs (requirements)"]
    try:
        needs = requirements(bundle)
    except BundleError as exc:
        return [str(exc)]
    except (ValueError, TypeError, KeyError) as exc:
        return [f"{where}: params: {exc}"]
    needs = {key: tensors for key, tensors in needs.items() if key not in skip}
    return [f"{where}: {p}" for p in unmet(needs, bundle.graphs)]
