"""build_asr on the tiny checkpoint: an ASR bundle that verifies like a voice,
its gates recorded; progress lines, the summary table, a rerun that skips
every stage, and an option only the bundle reads rerunning only the bundle."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from daemon.cli.bundle import main as bundle_cli
from daemon.engines.qwen3.asr.params import EMBED_TOKENS, TOKENIZER, AsrParams
from daemon.sdk.bundles.manifest import Bundle
from daemon.sdk.verify import verify_bundle
from scripts.common.build.report import STAGE_HEADER
from scripts.common.build.run import STATE_FILE
from scripts.common.build.stage import from_json
from scripts.qwen3.asr.build import main as build_asr
from scripts.qwen3.asr.pipeline.gating import CpuGates, SimGates
from scripts.qwen3.common.table import HEADER
from tests.qwen3_bundles import TINY_KV, TINY_PREFILL
from tests.scripts.qwen3.common.nudge import nudge_largest_weight, work_onnx

KEYS = ("encoder", f"prefill_{TINY_PREFILL[0]}", f"decode_{TINY_KV[0]}")


def test_the_tiny_bundle_is_an_asr_bundle_that_verifies(tiny_asr_bundle: Path, capsys):
    bundle = Bundle.load(tiny_asr_bundle)
    assert (bundle.engine, bundle.task, bundle.sample_rate) == (
        "qwen3-asr",
        "asr",
        16000,
    )
    assert bundle.target == "simulator" and bundle.languages[:2] == ("zh", "en")
    assert tuple(bundle.graphs) == KEYS
    for key, g in bundle.graphs.items():
        assert g.file == f"graphs/{key}.bin" and g.onnx == f"onnx/{key}.onnx"
    assert verify_bundle(bundle) == []
    assert bundle_cli(["verify", str(tiny_asr_bundle)]) == 0
    assert "OK (5 files, 3 graphs)" in capsys.readouterr().out
    assert tiny_asr_bundle.with_name("bundle.tar").is_file()
    p = AsrParams.from_mapping(bundle.params)
    assert (p.prefill_buckets, p.kv_buckets) == (TINY_PREFILL, TINY_KV)
    assert (p.hidden, p.layers, p.kv_heads, p.head_dim, p.vocab) == (64, 2, 2, 16, 410)


def test_the_cpu_tables_are_upstreams(tiny_asr_bundle: Path, tiny_asr_model: Path):
    tokenizers = pytest.importorskip("tokenizers")
    from scripts.qwen3.asr import oracle

    model, processor = oracle.load(tiny_asr_model)
    embed = np.load(tiny_asr_bundle / EMBED_TOKENS)
    want = model.thinker.model.embed_tokens.weight.detach().numpy()
    assert embed.dtype == np.float32  # tiny: bit-exact CPU parity
    np.testing.assert_array_equal(embed, want)
    tok = tokenizers.Tokenizer.from_file(str(tiny_asr_bundle / TOKENIZER))
    text = "language English<asr_text>The quick brown fox. 小孩儿在玩儿。"
    assert tok.encode(text).ids == processor.tokenizer(text)["input_ids"]


def test_gates_passed_and_are_recorded(tiny_asr_bundle: Path):
    state = json.loads((tiny_asr_bundle.parent / "work" / STATE_FILE).read_text())
    cpu = from_json(state["gates_cpu"]["result"], CpuGates).gates
    sim = from_json(state["gates_sim"]["result"], SimGates).gates
    assert set(cpu) == set(sim) == set(KEYS)
    for gates in (*cpu.values(), *sim.values()):
        assert gates and all(g.passed for g in gates)
    assert {g.metric for g in sim["decode_192"]} >= {"simulator cosine (min)"}


@pytest.fixture(scope="module")
def fresh(tiny_asr_model: Path, qnn_cache: Path, tmp_path_factory) -> list[str]:
    """build_asr's command line for a fresh build in a directory of its own (no
    simulator gates: the session fixture runs those)."""
    out = tmp_path_factory.mktemp("fresh") / "tiny"
    return [
        str(tiny_asr_model),
        "--target",
        "simulator",
        "--out",
        str(out),
        "--prefill-buckets",
        "128",
        "--kv-buckets",
        "192",
        "--qnn-cache",
        str(qnn_cache),
        "--no-sim-gates",
    ]


STAGES = ["export", "gates_cpu", "tables", *(f"compile {k}" for k in KEYS), "bundle"]


def _tables(out: str) -> tuple[list[str], list[str]]:
    """(the stage table's rows, the per-graph table's rows with its header and
    the total) of the build's summary on stdout (scripts/common/build/report.py)."""
    lines = [line.split() for line in out.splitlines()]
    stages = lines.index(list(STAGE_HEADER))
    graphs = lines.index(" ".join(HEADER).split())
    text = out.splitlines()
    return text[stages + 1 : graphs - 1], text[graphs : graphs + len(KEYS) + 2]


def test_progress_table_and_a_rerun_that_skips_everything(fresh: list[str], capsys):
    """A fresh build, then the same command again: every stage says it is up
    to date, nothing is redone, in seconds."""
    argv = fresh
    out_dir = Path(argv[argv.index("--out") + 1])
    assert build_asr(argv) == 0
    out, err = capsys.readouterr()
    for i, name in enumerate(STAGES, 1):
        assert f"[{i}/{len(STAGES)}] {name} ...\n" in err
        assert f"[{i}/{len(STAGES)}] {name}: done in " in err
    stages, table = _tables(out)
    assert [r.rsplit(None, 2)[:2] for r in stages] == [[n, "ran"] for n in STAGES]
    rows = {line.split()[0]: line for line in table[1 : 1 + len(KEYS)]}
    assert set(rows) == set(KEYS)
    assert "rel " in rows["encoder"] and "not run" in rows["encoder"]
    assert "argmax 1" in rows["decode_192"]
    assert table[len(KEYS) + 1].split()[0] == "total"
    assert f"{len(STAGES)} stage(s) ran, 0 resumed" in out
    assert Bundle.load(out_dir).task == "asr"

    start = time.monotonic()
    assert build_asr(argv) == 0
    seconds = time.monotonic() - start
    out2, err2 = capsys.readouterr()
    for i, name in enumerate(STAGES, 1):
        assert f"[{i}/{len(STAGES)}] {name}: up to date, skipped" in err2
    stages2, table2 = _tables(out2)
    assert " ...\n" not in err2 and table2 == table
    assert [r.rsplit(None, 2) for r in stages2] == [[n, "resumed", "-"] for n in STAGES]
    assert f"0 stage(s) ran, {len(STAGES)} resumed" in out2
    assert seconds < 30, f"a fully resumed build took {seconds:.1f} s"


def test_a_bundle_without_onnx_verifies_and_the_cpu_backend_says_why(
    fresh: list[str], capsys
):
    """--no-onnx (a board bundle; full-size fp32 graphs are ~2.4 GB each): only
    the bundle step reruns; the bundle verifies; the CPU backend refuses it."""
    from daemon.sdk.bundles.manifest import BundleError
    from daemon.sdk.graphs import GraphHost

    out = Path(fresh[fresh.index("--out") + 1])
    argv = [
        *fresh,
        "--no-onnx",
        "--out",
        str(out.with_name("board")),
        "--work",
        str(out.with_name(out.name + ".work")),
    ]
    assert build_asr(argv) == 0
    err = capsys.readouterr().err
    assert "[7/7] bundle ...\n" in err and err.count("up to date, skipped") == 6
    bundle = Bundle.load(out.with_name("board"))
    assert not (bundle.root / "onnx").exists()
    assert all(g.onnx is None for g in bundle.graphs.values())
    assert verify_bundle(bundle) == []
    host = GraphHost("cpu")
    try:
        with pytest.raises(BundleError, match="the CPU backend needs bundles built "):
            host.open([bundle])
    finally:
        host.close()


def test_a_graph_off_upstream_fails_its_gate_naming_it(fresh: list[str], capsys):
    """The decode graph's LM head nudged after export: the CPU gate reruns (its
    input changed), fails naming the graphs, the metric and the bound, and the
    build exits 1."""
    nudge_largest_weight(work_onnx(fresh, f"decode_{TINY_KV[0]}"))
    assert build_asr(fresh) == 1
    err = capsys.readouterr().err
    assert "[1/7] export: up to date, skipped" in err
    assert "[2/7] gates_cpu ...\n" in err
    assert "error: gate failed: prefill_128, decode_192: decoder: rel error " in err
    assert "(< 0.0001) FAIL" in err


def test_the_shell_entry_point_helps():
    """scripts/build-qwen3-asr (the shell wrapper the docs name) runs the module."""
    import subprocess

    root = Path(__file__).resolve().parents[4]
    done = subprocess.run(
        [str(root / "scripts" / "build_asr"), "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: scripts/build-qwen3-asr [-h] --target")
    for flag in ("--prefill-buckets", "--kv-buckets", "--sim-gates", "--no-onnx"):
        assert flag in done.stdout


def test_the_board_target_keeps_one_decoder_weight_copy(fresh: list[str]):
    """qcs8550 shares weights (its target profile): prefill and decode in one
    binary, the encoder alone; the simulator build above keeps one per graph."""
    argv = [*fresh]
    argv[argv.index("--target") + 1] = "qcs8550"
    out = Path(argv[argv.index("--out") + 1]).with_name("board")
    argv[argv.index("--out") + 1] = str(out)
    assert build_asr(argv) == 0
    bundle = Bundle.load(out)
    decoder = {k: g.file for k, g in bundle.graphs.items() if k != "encoder"}
    assert set(decoder.values()) == {f"graphs/shared_{KEYS[1]}.bin"}
    assert bundle.graphs["encoder"].file == "graphs/encoder.bin"
    assert verify_bundle(bundle) == []


def test_the_odd_bundle_takes_the_checkpoints_vocab_and_ids(
    tiny_asr_odd_bundle: Path, tiny_asr_odd_model: Path
):
    """The padded vocabulary and the moved special ids come from the
    checkpoint: config.json's rows and the tokenizer's ids."""
    from scripts.qwen3.asr import oracle

    model, processor = oracle.load(tiny_asr_odd_model)
    p = AsrParams.from_mapping(Bundle.load(tiny_asr_odd_bundle).params)
    text = model.config.thinker_config.text_config
    assert (p.hidden, p.layers, p.kv_heads, p.head_dim) == (45, 3, 1, 14)
    assert p.vocab == text.vocab_size > len(processor.tokenizer)
    assert np.load(tiny_asr_odd_bundle / EMBED_TOKENS).shape == (p.vocab, p.hidden)
    tok = processor.tokenizer.convert_tokens_to_ids
    t = p.tokens
    assert (t.audio_pad, t.audio_start, t.audio_end, t.im_start, t.im_end) == (
        tok("<|audio_pad|>"),
        tok("<|audio_start|>"),
        tok("<|audio_end|>"),
        tok("<|im_start|>"),
        tok("<|im_end|>"),
    )
    assert t.eos == (tok("<|im_end|>"), tok("<|endoftext|>")) == (6, 8)
    assert p.mel.n_mels == 97 and p.mel.window_chunks == 3
