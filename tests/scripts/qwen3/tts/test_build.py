"""build_tts_qwen3 on the tiny checkpoints: TTS bundles that verify, whose
params, tables and tokenizer are the checkpoint's and upstream's, their gates
recorded; progress lines, the summary table, a rerun that skips every step and
a gate change that reruns only the gates."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from daemon.cli.bundle import main as bundle_cli
from daemon.engines.qwen3.tts import params as layout
from daemon.engines.qwen3.tts.params import TtsParams
from daemon.sdk.bundles.manifest import Bundle
from daemon.sdk.verify import verify_bundle
from scripts.common.steps import STATE_FILE
from scripts.qwen3.tts.build import main as build_tts
from scripts.qwen3.tts.pipeline import code
from scripts.qwen3.tts.pipeline.report import HEADER
from tests.qwen3_bundles import TTS_KV, TTS_PREFILL
from tests.qwen3_fixtures import require_qwen_tts

require_qwen_tts()

P, L = TTS_PREFILL[0], TTS_KV[0]
CUSTOM_KEYS = (
    "text_proj",
    f"talker_prefill_{P}",
    *(f"talker_decode_{n}" for n in TTS_KV),
    "cp_step",
    "codec_4",
    "codec_8",
    "codec_16",
    "codec_325",
)
BASE_KEYS = (*CUSTOM_KEYS, "speaker_93", "speaker_187")
CODECS = [k for k in CUSTOM_KEYS if k.startswith("codec_")]


def _config(model: Path) -> dict:
    return json.loads((model / "config.json").read_text())


def test_the_custom_bundle_is_a_tts_bundle_that_verifies(
    tiny_tts_custom_bundle: Path, tiny_tts_custom: Path, capsys
):
    bundle = Bundle.load(tiny_tts_custom_bundle)
    assert (bundle.engine, bundle.task, bundle.sample_rate) == (
        "qwen3-tts",
        "tts",
        24000,
    )
    assert bundle.target == "simulator" and bundle.name == "qwen3-tts-tiny-custom-voice"
    assert tuple(bundle.graphs) == CUSTOM_KEYS
    for key, g in bundle.graphs.items():
        assert g.file == f"graphs/{key}.bin" and g.onnx == f"onnx/{key}.onnx"
    assert verify_bundle(bundle) == []
    assert bundle_cli(["verify", str(tiny_tts_custom_bundle)]) == 0
    assert f"{len(CUSTOM_KEYS)} graphs)" in capsys.readouterr().out
    assert tiny_tts_custom_bundle.with_name("bundle.tar").is_file()
    p = TtsParams.from_mapping(bundle.params)
    cfg = _config(tiny_tts_custom)
    t = cfg["talker_config"]
    assert p.kind == "custom_voice" and p.xvector is None
    assert (p.prefill_buckets, p.kv_buckets) == (TTS_PREFILL, TTS_KV)
    assert (p.talker.hidden, p.talker.layers, p.talker.vocab) == (
        t["hidden_size"],
        t["num_hidden_layers"],
        t["vocab_size"],
    )
    assert p.predictor.groups == 16 and p.predictor.vocab == 128
    # every id from the file (the tiny ids are not upstream's code defaults)
    assert (p.tokens.codec_eos, p.tokens.codec_pad, p.tokens.codec_bos) == (
        t["codec_eos_token_id"],
        t["codec_pad_id"],
        t["codec_bos_id"],
    )
    assert (
        p.tokens.tts_pad,
        p.tokens.tts_bos,
        p.tokens.tts_eos,
        p.tokens.im_start,
    ) == (
        cfg["tts_pad_token_id"],
        cfg["tts_bos_token_id"],
        cfg["tts_eos_token_id"],
        cfg["im_start_token_id"],
    )
    assert dict(p.languages) == t["codec_language_id"]
    assert {n: (s.id, s.dialect or False) for n, s in p.speakers.items()} == {
        n: (i, t["spk_is_dialect"][n]) for n, i in t["spk_id"].items()
    }
    assert p.sampling.suppress == (t["vocab_size"] - 1024, t["vocab_size"])
    assert p.text_mode == "non_streaming" and p.embedding_dtype == "float32"
    assert [(w.frames, w.context) for w in p.codec.windows] == [(4, 2), (8, 4), (16, 6)]
    assert (p.codec.chunk_frames, p.codec.left_context) == (300, 25)
    assert bundle.languages == tuple(
        {"chinese": "zh", "english": "en", "japanese": "ja", "korean": "ko"}.get(n, n)
        for n in p.advertised_languages[1:]
    )


def test_sampling_is_the_generation_config_over_upstreams_defaults(
    tiny_tts_custom_bundle: Path, tiny_tts_custom: Path
):
    gen = json.loads((tiny_tts_custom / "generation_config.json").read_text())
    s = TtsParams.from_mapping(Bundle.load(tiny_tts_custom_bundle).params).sampling
    assert (s.top_k, s.top_p, s.temperature, s.max_new_tokens) == (
        gen["top_k"],
        gen["top_p"],
        gen["temperature"],
        gen["max_new_tokens"],
    )
    assert (s.subtalker_top_k, s.subtalker_temperature) == (
        gen["subtalker_top_k"],
        gen["subtalker_temperature"],
    )
    assert s.top_k != 50  # upstream's hard default: the file's value won
    assert s.min_new_tokens == 2


def test_the_cpu_tables_and_tokenizer_are_upstreams(
    tiny_tts_custom_bundle: Path, tiny_tts_custom: Path
):
    tokenizers = pytest.importorskip("tokenizers")
    from scripts.qwen3.tts import oracle

    tts = oracle.load(tiny_tts_custom)
    talker = tts.model.talker
    want = {
        layout.TEXT_EMBEDDING: talker.model.text_embedding.weight,
        layout.CODEC_EMBEDDING: talker.model.codec_embedding.weight,
    }
    for name, weight in want.items():
        got = np.load(tiny_tts_custom_bundle / name)
        assert got.dtype == np.float32  # tiny: bit-exact CPU parity
        np.testing.assert_array_equal(got, weight.detach().numpy())
    cp = np.load(tiny_tts_custom_bundle / layout.CP_EMBEDDING)
    tables = talker.code_predictor.model.codec_embedding
    assert cp.shape == (15, 128, talker.config.hidden_size)
    for i in (0, 7, 14):  # table i embeds code i + 1 (upstream's offsets)
        np.testing.assert_array_equal(cp[i], tables[i].weight.detach().numpy())
    tok = tokenizers.Tokenizer.from_file(str(tiny_tts_custom_bundle / layout.TOKENIZER))
    text = tts._build_assistant_text("The quick brown fox. 小孩儿在玩儿。")
    want = tts._tokenize_texts([text])[0][0].tolist()  # what upstream feeds
    assert tok.encode(text).ids == want


def test_the_base_bundle_clones_with_upstreams_mel(
    tiny_tts_base_bundle: Path, tiny_tts_base: Path
):
    import librosa

    bundle = Bundle.load(tiny_tts_base_bundle)
    assert tuple(bundle.graphs) == BASE_KEYS and verify_bundle(bundle) == []
    p = TtsParams.from_mapping(bundle.params)
    assert p.kind == "base" and p.speakers == {} and p.text_mode == "streaming"
    assert p.xvector is not None and p.xvector.frame_buckets == (93, 187)
    assert p.xvector.dim == p.talker.hidden
    basis = np.load(tiny_tts_base_bundle / layout.MEL_BASIS)
    want = librosa.filters.mel(sr=24000, n_fft=1024, n_mels=128, fmin=0, fmax=12000)
    assert basis.shape == (128, 513)
    np.testing.assert_allclose(basis, want, rtol=0, atol=1e-7)


@pytest.mark.parametrize("which", ["custom", "base"])
def test_gates_passed_and_are_recorded(
    which: str, tiny_tts_custom_bundle: Path, tiny_tts_base_bundle: Path
):
    root = tiny_tts_custom_bundle if which == "custom" else tiny_tts_base_bundle
    keys = CUSTOM_KEYS if which == "custom" else BASE_KEYS
    state = json.loads((root.parent / "work" / STATE_FILE).read_text())
    cpu = state["gates_cpu"]["result"]["gates"]
    sim = state["gates_sim"]["result"]["gates"]
    assert set(cpu) == set(keys)
    for key in CODECS:  # every window's fp16 range, on the CPU
        assert any(g["metric"].startswith("fp16 range share") for g in cpu[key])
    for gates in (*cpu.values(), *sim.values()):
        assert gates and all(g["passed"] for g in gates)
    up = cpu["codec_325"][-1]
    # bound by upstream float32's own SNR to float64 on the same codes
    assert up["metric"].startswith("SNR dB vs float64 decode, in upstream's "
                                   "300+25 chunking (upstream float32: ")  # fmt: skip
    assert 100 < up["threshold"] <= up["value"]
    assert set(sim) >= {"text_proj", f"talker_decode_{L}", "cp_step"}
    # the same codec: gated once, and only the window the fixture lists
    assert [k for k in sim if k in CODECS] == (["codec_4"] if which == "custom" else [])
    if which == "custom":
        assert {g["metric"] for g in sim["codec_4"]} == {
            "simulator cosine (min)",
            "simulator SNR dB (whole window)",
        }
    for f in (93, 187) if which == "base" else ():
        # three clip lengths on the CPU; one on the simulator, its rel reported
        assert len(cpu[f"speaker_{f}"]) == 3
        metrics = [g["metric"] for g in sim[f"speaker_{f}"]]
        assert metrics[0] == "simulator cosine (min)"
        assert metrics[1].startswith("simulator rel error vs upstream")
    assert {g["metric"] for g in sim[f"talker_decode_{L}"]} >= {
        "simulator cosine (min)"
    }
    windows = state["windows"]["result"]
    given = [{"frames": 4, "context": 2}, {"frames": 8, "context": 4},
             {"frames": 16, "context": 6}]  # fmt: skip
    assert windows["codec"]["windows"] == given  # given contexts are kept
    sched = windows["schedule"]
    assert sched["first_frames"] == 4 and sched["receptive_field"] == 154
    assert not sched["exact"]  # 6 frames of context, 154 needed: said so
    assert windows["codec"]["stream_snr_db"] == sched["snr_db"] < 20


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
STEPS = [
    "windows",
    "export",
    "gates_cpu",
    "tables",
    *(f"compile {k}" for k in FRESH_KEYS),
    "bundle",
]


def test_progress_table_and_a_rerun_that_skips_everything(fresh: list[str], capsys):
    out_dir = Path(fresh[fresh.index("--out") + 1])
    start = time.monotonic()
    assert build_tts(fresh) == 0
    first = time.monotonic() - start
    out, err = capsys.readouterr()
    n = len(STEPS)
    for i, name in enumerate(STEPS, 1):
        assert f"[{i}/{n}] {name} ...\n" in err
        assert f"[{i}/{n}] {name}: done in " in err
    table = out.splitlines()
    assert table[0].split() == " ".join(HEADER).split()
    rows = {line.split()[0]: line for line in table[1 : 1 + len(FRESH_KEYS)]}
    assert set(rows) == set(FRESH_KEYS)
    assert "rel " in rows["text_proj"] and "not run" in rows["text_proj"]
    assert "argmax 1" in rows[f"talker_decode_{L}"] and "SNR " in rows["codec_4"]
    assert table[len(FRESH_KEYS) + 1].startswith("total binaries: ")
    assert any(line.startswith("codec schedule [[4, 2]] after 4 first frames: "
                               "APPROXIMATE (receptive field 154 frames)")
               for line in table)  # fmt: skip
    assert Bundle.load(out_dir).task == "tts"

    start = time.monotonic()
    assert build_tts(fresh) == 0
    seconds = time.monotonic() - start
    out2, err2 = capsys.readouterr()
    for i, name in enumerate(STEPS, 1):
        assert f"[{i}/{n}] {name}: up to date, skipped" in err2
    assert " ...\n" not in err2 and out2 == out
    assert seconds < 30, (
        f"a fully resumed build took {seconds:.1f} s (fresh {first:.0f})"
    )


def test_a_bundle_without_onnx_verifies(fresh: list[str], capsys):
    """--no-onnx (a board bundle): only the bundle step reruns."""
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
    n = len(STEPS)
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
    n = len(STEPS) + 1
    ran = {line.split("] ")[1][: -len(" ...")] for line in err.splitlines()
           if line.startswith("[") and line.endswith(" ...")}  # fmt: skip
    assert ran == {"quant cp_step", "compile cp_step", "bundle"}, ran
    assert f"[5/{n}] quant cp_step ...\n" in err
    quantized = onnx.load(str(work / "onnx_npu" / "cp_step.w8a16.onnx"))
    ops = {node.op_type for node in quantized.graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops
    bundle = Bundle.load(out.with_name("w8a16"))
    assert verify_bundle(bundle) == []
    assert bundle.graphs["cp_step"].onnx == "onnx/cp_step.onnx"  # fp32 for the CPU


def test_a_gate_change_reruns_only_the_gates(fresh: list[str], capsys, monkeypatch):
    """The gates' code hash changes (as an edit to gates.py would): gates_cpu
    reruns, every other step (export, compiles: minutes at full size) stays."""
    assert build_tts(fresh) == 0  # back to this command's own state
    capsys.readouterr()
    hashes = code.hashes()
    monkeypatch.setattr(code, "hashes", lambda: {**hashes, "gates": "changed"})
    assert build_tts(fresh) == 0
    err = capsys.readouterr().err
    ran = [s for s in STEPS if f"] {s} ...\n" in err]
    assert ran == ["gates_cpu"], ran


def test_a_graph_off_upstream_fails_its_gate_naming_it(fresh: list[str], capsys):
    """The decode graph's head nudged after export: the CPU gate reruns (its
    input changed), fails naming the graphs, the metric and the bound, and the
    build exits 1."""
    import onnx
    from onnx import numpy_helper

    work = Path(fresh[fresh.index("--out") + 1] + ".work")
    path = work / "onnx" / f"talker_decode_{L}.onnx"
    model = onnx.load(str(path))
    big = max(model.graph.initializer, key=lambda t: np.prod(t.dims))
    weight = numpy_helper.to_array(big)
    big.CopyFrom(numpy_helper.from_array(weight * np.float32(1.01), big.name))
    onnx.save(model, str(path))
    assert build_tts(fresh) == 1
    err = capsys.readouterr().err
    assert f"[3/{len(STEPS)}] gates_cpu ...\n" in err
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
