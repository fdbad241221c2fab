"""build_tts_qwen3's command line on a fresh tiny build of its own: the
progress lines, the summary (stage table, graph table, the schedule
measured), a rerun that skips every stage in seconds, a change to one stage's
code or inputs rerunning only what reads it, a failed gate naming graph,
metric and bound, and the shell entry point."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from daemon.engines.qwen3.tts.params import TtsParams
from daemon.sdk.bundles.manifest import Bundle
from daemon.sdk.verify import verify_bundle
from scripts.common.build import run as runner
from scripts.common.build.code import closure
from scripts.common.build.report import STAGE_HEADER
from scripts.qwen3.common.table import HEADER
from scripts.qwen3.tts.build import main as build_tts
from scripts.qwen3.tts.graphs import gates as gates_module
from tests.qwen3_bundles import TTS_KV, TTS_PREFILL
from tests.qwen3_fixtures import require_qwen_tts
from tests.scripts.qwen3.common.nudge import nudge_largest_weight, work_onnx

require_qwen_tts()

P, L = TTS_PREFILL[0], TTS_KV[0]


@pytest.fixture(scope="module")
def fresh(tiny_tts_custom: Path, qnn_cache: Path, tmp_path_factory) -> list[str]:
    """build_tts_qwen3's command line for a fresh build in a directory of its
    own (no simulator gates: the session fixture runs those)."""
    out = tmp_path_factory.mktemp("fresh") / "tiny"
    return [
        str(tiny_tts_custom),
        "--target",
        "simulator",
        "--out",
        str(out),
        "--prefill-buckets",
        str(P),
        "--kv-buckets",
        str(L),
        "--codec-windows",
        "4:2",
        "--first-frames",
        "4",
        "--qnn-cache",
        str(qnn_cache),
        "--no-sim-gates",
    ]


FRESH_KEYS = ("text_proj", f"talker_prefill_{P}", f"talker_decode_{L}", "cp_step",
              "codec_4")  # fmt: skip
STAGES = [
    "windows",
    "export",
    "gates_cpu",
    "tables",
    *(f"compile {k}" for k in FRESH_KEYS),
    "bundle",
]
#: what the summary says after its tables: the codec schedule measured
SCHEDULE = (
    "codec schedule [[4, 2]] after 4 first frames: APPROXIMATE (receptive field "
    "154 frames)"
)


def _summary(out: str) -> tuple[list[str], list[str], list[str]]:
    """(the stage table's rows, the per-graph table's rows with its header
    and total, the lines after the stage count) of the build's summary on
    stdout (scripts/common/build/report.py, then the build's notes)."""
    lines = out.splitlines()
    words = [line.split() for line in lines]
    stages = words.index(list(STAGE_HEADER))
    graphs = words.index(" ".join(HEADER).split())
    end = graphs + len(FRESH_KEYS) + 2
    assert "stage(s) ran" in lines[end]
    return lines[stages + 1 : graphs - 1], lines[graphs:end], lines[end + 1 :]


def _ran(err: str) -> list[str]:
    """The stages a run's progress lines say ran, in order."""
    return [
        line.split("] ", 1)[1].removesuffix(" ...")
        for line in err.splitlines()
        if line.startswith("[") and line.endswith(" ...")
    ]


def test_progress_table_and_a_rerun_that_skips_everything(fresh: list[str], capsys):
    """A fresh build, then the same command again: every stage says it is up
    to date, nothing is redone, in seconds."""
    out_dir = Path(fresh[fresh.index("--out") + 1])
    start = time.monotonic()
    assert build_tts(fresh) == 0
    first = time.monotonic() - start
    out, err = capsys.readouterr()
    n = len(STAGES)
    for i, name in enumerate(STAGES, 1):
        assert f"[{i}/{n}] {name} ...\n" in err
        assert f"[{i}/{n}] {name}: done in " in err
    stages, table, notes = _summary(out)
    assert [r.rsplit(None, 2)[:2] for r in stages] == [[s, "ran"] for s in STAGES]
    rows = {line.split()[0]: line for line in table[1 : 1 + len(FRESH_KEYS)]}
    assert set(rows) == set(FRESH_KEYS)
    assert "rel " in rows["text_proj"] and "not run" in rows["text_proj"]
    assert "argmax 1" in rows[f"talker_decode_{L}"] and "SNR " in rows["codec_4"]
    assert table[len(FRESH_KEYS) + 1].split()[0] == "total"
    assert f"{n} stage(s) ran, 0 resumed" in out
    assert any(line.startswith(SCHEDULE) for line in notes), notes
    assert "cpu tables: float32" in notes
    assert Bundle.load(out_dir).task == "tts"

    start = time.monotonic()
    assert build_tts(fresh) == 0
    seconds = time.monotonic() - start
    out2, err2 = capsys.readouterr()
    for i, name in enumerate(STAGES, 1):
        assert f"[{i}/{n}] {name}: up to date, skipped" in err2
    stages2, table2, notes2 = _summary(out2)
    assert " ...\n" not in err2 and (table2, notes2) == (table, notes)
    assert [r.rsplit(None, 2) for r in stages2] == [[s, "resumed", "-"] for s in STAGES]
    assert f"0 stage(s) ran, {n} resumed" in out2
    with capsys.disabled():  # the measurement, in the test log
        print(f"\ntiny TTS build: fresh {first:.1f} s, resumed {seconds:.1f} s")
    assert seconds < 30, (
        f"a fully resumed build took {seconds:.1f} s (fresh {first:.0f})"
    )


def test_a_bundle_without_onnx_verifies(fresh: list[str], capsys):
    """--no-onnx (a board bundle): only the bundle stage reruns."""
    out = Path(fresh[fresh.index("--out") + 1])
    argv = [
        *fresh,
        "--no-onnx",
        "--out",
        str(out.with_name("board")),
        "--work",
        str(out.with_name(out.name + ".work")),
    ]
    assert build_tts(argv) == 0
    err = capsys.readouterr().err
    n = len(STAGES)
    assert _ran(err) == ["bundle"]
    assert (
        f"[{n}/{n}] bundle ...\n" in err and err.count("up to date, skipped") == n - 1
    )
    bundle = Bundle.load(out.with_name("board"))
    assert not (bundle.root / "onnx").exists()
    assert all(g.onnx is None for g in bundle.graphs.values())
    assert verify_bundle(bundle) == []


def test_the_w8a16_code_predictor_is_opt_in(fresh: list[str], capsys):
    """--cp-weights w8a16: cp_step is quantized (QDQ, calibrated on the gate
    trajectory's predictor feeds) and compiled from that; nothing else reruns
    but the bundle, which still verifies."""
    import onnx

    out = Path(fresh[fresh.index("--out") + 1])
    work = out.with_name(out.name + ".work")
    argv = [*fresh, "--cp-weights", "w8a16", "--out", str(out.with_name("w8a16")),
            "--work", str(work)]  # fmt: skip
    assert build_tts(argv) == 0
    err = capsys.readouterr().err
    n = len(STAGES) + 1
    assert set(_ran(err)) == {"quant cp_step", "compile cp_step", "bundle"}, err
    assert f"[5/{n}] quant cp_step ...\n" in err
    quantized = onnx.load(str(work / "onnx_npu" / "cp_step.w8a16.onnx"))
    ops = {node.op_type for node in quantized.graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops
    bundle = Bundle.load(out.with_name("w8a16"))
    assert verify_bundle(bundle) == []
    assert bundle.graphs["cp_step"].onnx == "onnx/cp_step.onnx"  # fp32 for the CPU


def test_a_schedule_option_reruns_what_reads_the_schedule(fresh: list[str], capsys):
    """--first-frames 3: the windows stage measures again, the tables stage
    reads its new result (the params' codec) and the bundle the new params;
    the export, the gates and the compiles (nothing of theirs changed) stay."""
    assert build_tts(fresh) == 0  # back to this command's own state
    capsys.readouterr()
    out = Path(fresh[fresh.index("--out") + 1])
    argv = [*fresh, "--first-frames", "3", "--out", str(out.with_name("first3")),
            "--work", str(out.with_name(out.name + ".work"))]  # fmt: skip
    assert build_tts(argv) == 0
    assert _ran(capsys.readouterr().err) == ["windows", "tables", "bundle"]
    p = TtsParams.from_mapping(Bundle.load(out.with_name("first3")).params)
    assert p.codec.first_frames == 3


def test_a_gate_change_reruns_only_the_gates(fresh: list[str], capsys, monkeypatch):
    """An edit to graphs/gates.py (its code key changed, as the file's content
    would change it): the stages whose code imports it rerun (gates_cpu here;
    the simulator gates are off), every other stage (export, compiles: minutes
    at full size) stays."""
    assert build_tts(fresh) == 0  # back to this command's own state
    capsys.readouterr()
    edited = Path(gates_module.__file__).resolve()
    real = runner.code_key

    def code_key(modules):
        key = real(modules)
        return key + " edited" if edited in closure(modules) else key

    monkeypatch.setattr(runner, "code_key", code_key)
    assert build_tts(fresh) == 0
    assert _ran(capsys.readouterr().err) == ["gates_cpu"]


def test_a_graph_off_upstream_fails_its_gate_naming_it(fresh: list[str], capsys):
    """The decode graph's head nudged after export: the CPU gate reruns (its
    input changed), fails naming the graphs, the metric and the bound, and the
    build exits 1."""
    nudge_largest_weight(work_onnx(fresh, f"talker_decode_{L}"))
    assert build_tts(fresh) == 1
    err = capsys.readouterr().err
    assert f"[3/{len(STAGES)}] gates_cpu ...\n" in err
    assert (
        f"error: gate failed: talker_prefill_{P}, talker_decode_{L}: talker "
        "logits: rel error vs float64 (CPU fp32) "
    ) in err
    assert "(< 0.0001) FAIL" in err


def test_the_shell_entry_point_helps():
    """scripts/build-qwen3-tts (the shell wrapper the docs name) runs the module."""
    import subprocess

    root = Path(__file__).resolve().parents[4]
    done = subprocess.run(
        [str(root / "scripts" / "build_tts_qwen3"), "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: scripts/build-qwen3-tts [-h]")
    for flag in (
        "--codec",
        "--prefill-buckets",
        "--kv-buckets",
        "--codec-windows",
        "--xvector-seconds",
        "--cp-weights",
        "--no-onnx",
        "--sim-gates",
    ):
        assert flag in done.stdout
