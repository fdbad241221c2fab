"""The GPT-SoVITS build on the test voice: bundle per layout.py, gates recorded,
resumable stage by stage, clear errors for missing inputs."""

from __future__ import annotations

import json
import shutil
import sys
import time
import types
from pathlib import Path

import numpy as np
import pytest
import yaml

from daemon.engines.gptsovits import layout
from daemon.engines.gptsovits.frontend import G2pwHead, G2pwTables
from daemon.sdk.bundles.manifest import Bundle
from scripts.common.build.cache import locked
from scripts.common.build.code import closure
from scripts.common.build.run import STATE_FILE
from scripts.gptsovits import build
from scripts.gptsovits.export import aihub
from scripts.gptsovits.export.cpu_tables import TABLE_FILES
from scripts.gptsovits.export.shapes import TINY
from scripts.gptsovits.stages.report import HEADER, graph_rows
from scripts.gptsovits.synthetic.build import LOCK, QNN_CACHE, VOICE, options
from scripts.gptsovits.synthetic.voice import TINY_BERT_DIM, voice_at
from scripts.gptsovits.verify import cpu as verify
from scripts.gptsovits.verify import sim as sim_verify
from tests.conftest import GSV_VOICES

KEYS = {
    layout.G2PW,
    layout.BERT,
    layout.T2S_PREFILL,
    *(layout.t2s_decode_key(n) for n in TINY.kv_buckets),
    layout.VITS_ENC,
    layout.VITS_GEN,
}


def _state(built_voice: Path) -> dict:
    return json.loads((built_voice / "work" / STATE_FILE).read_text())


def test_bundle_follows_layout(built_voice: Path) -> None:
    root = built_voice / "bundle"
    bundle = Bundle.load(root)
    assert bundle.engine == layout.ENGINE_ID
    assert (bundle.sample_rate, bundle.languages) == (32000, ("zh", "en"))
    assert bundle.target == "simulator" and bundle.qnn_sdk
    assert set(bundle.graphs) == KEYS
    for key, g in bundle.graphs.items():
        assert g.file == f"graphs/{key}.bin" and g.onnx == f"onnx/{key}.onnx"
    params = layout.GsvParams.from_mapping(bundle.params)
    assert params.kv_buckets == TINY.kv_buckets and params.hop == 640
    assert params.bert_dim == TINY_BERT_DIM and params.mask_value == -100.0
    for rel in TABLE_FILES:
        assert np.load(root / rel).dtype == np.float32, rel
    assert np.load(root / layout.T2S_POS_ALPHA).shape == (2,)
    tables = G2pwTables.from_dir(root / layout.TEXT_DIR)
    head = G2pwHead.load(root / "cpu", layout.G2PW_HEAD_PREFIX)
    assert head.char_desc.shape == tables.label_mask.shape
    assert (root / layout.TEXT_DIR / "vocab.txt").is_file()
    assert bundle.voices[VOICE]["file"] == layout.ref_file(VOICE)


def test_reference_archive(built_voice: Path) -> None:
    bundle = Bundle.load(built_voice / "bundle")
    params = layout.GsvParams.from_mapping(bundle.params)
    with np.load(bundle.path(layout.ref_file(VOICE))) as ref:
        phones, bert = ref[layout.REF_PHONES], ref[layout.REF_BERT]
        assert phones.dtype == np.int32 and bert.dtype == np.float32
        assert bert.shape == (len(phones), params.bert_dim)
        prompt = ref[layout.REF_PROMPT]
        assert prompt.dtype == np.int32 and len(phones) + len(prompt) < TINY.prefill_len
        assert ref[layout.REF_GE].shape == (params.gin, 1)
        assert ref[layout.REF_GE512].shape[1] == 1
        assert str(ref[layout.REF_TEXT]) == "小孩儿在玩儿."
        assert str(ref[layout.REF_LANG]) == "zh"


def test_gates_passed_with_port_thresholds(built_voice: Path) -> None:
    """Every gate ran on the test voice and met the port's acceptance thresholds."""
    state = _state(built_voice)
    cpu = state["gates_cpu"]["result"]
    for n in TINY.kv_buckets:
        assert cpu[f"t2s_L{n}_rel_err"] < verify.T2S_MAX_REL_ERR
        assert cpu[f"kv16_t2s_L{n}_top1"] == 1.0
    assert cpu["vits_gen_snr_db"] >= verify.VITS_GEN_MIN_SNR_DB
    assert cpu["bert_rel_err"] < 1e-4 and cpu["g2pw_agreement"] == 1.0
    # the reference's BERT features match the training folder's 3-bert/
    assert state["refs"]["result"]["training_bert_rel_err"] < 2e-2
    sim = state["gates_sim"]["result"]
    assert set(sim) == KEYS
    for key, r in sim.items():
        assert r["seconds"], key
        if key == layout.VITS_GEN:
            assert r["value"] >= sim_verify.SIM_VOCODER_MIN_SNR_DB
        elif key.startswith("t2s"):
            assert r["value"] >= sim_verify.SIM_T2S_MIN_TOPK_AGREEMENT
        else:
            assert r["value"] >= sim_verify.SIM_MIN_COSINE


#: a resumed tiny build costs finding its inputs and hashing them, no stage's
#: work (measured: about 5 s; a stage that ran would add 10 s or more)
RESUMED_SECONDS = 30.0


def test_a_second_run_resumes_every_stage(built_voice: Path) -> None:
    with locked(built_voice.parent / LOCK):  # other sessions may share the dir
        start = time.monotonic()
        built = build.build(_options(built_voice / "source", built_voice))
        seconds = time.monotonic() - start
    assert built.run.ran == []
    assert set(built.run.skipped) == set(_state(built_voice))
    assert seconds < RESUMED_SECONDS
    rows = graph_rows(built.run)
    assert rows[0] == HEADER and len(rows) == 1 + len(KEYS)
    assert {row[0] for row in rows[1:]} == KEYS
    text = build.summary(built).splitlines()
    assert text[0].split() == ["stage", "status", "seconds"]
    assert text[-1].startswith(f"0 stage(s) ran, {len(built.run.skipped)} resumed")


def _options(source: Path, base: Path, **changed: object) -> build.BuildOptions:
    """The test voice's build in ``base`` (bundle/, work/) with the compile
    cache of the test voices (``changed``: other options)."""
    opts = options(voice_at(source), base / "bundle", base / "work", "simulator")
    return build.BuildOptions(**{**vars(opts), **changed})


def test_a_change_reruns_the_stages_it_reaches_only(
    built_voice: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """A build of its own: a new bundle place reruns the bundle only; another
    reference transcript the reference and the bundle."""
    src = _copy_source(built_voice, tmp_path)
    base = tmp_path / "voice"
    own = {"sim_gates": False, "qnn_cache": built_voice.parent / QNN_CACHE}
    first = build.build(_options(src, base, **own))
    assert first.run.skipped == [] and "bundle" in first.run.ran
    again = build.build(_options(src, base, **own))
    assert again.run.ran == []
    moved = _options(src, base, **own, out=tmp_path / "elsewhere")
    assert build.build(moved).run.ran == ["bundle"]
    assert Bundle.load(tmp_path / "elsewhere").voices[VOICE]["text"] == "小孩儿在玩儿."
    retold = _options(src, base, **own, ref_text="小孩儿在玩。")
    assert build.build(retold).run.ran == ["refs", "bundle"]
    assert Bundle.load(base / "bundle").voices[VOICE]["text"] == "小孩儿在玩。"
    err = capsys.readouterr().err
    assert "export_t2s: up to date, skipped" in err and "refs ..." in err


def _stage_code(name: str) -> set[str]:
    """The repository files the stage ``name``'s code key covers."""
    (stage,) = [s for s in build.stages() if s.name == name]
    root = Path(build.__file__).parents[2]
    return {str(p.relative_to(root)) for p in closure(stage.modules)}


def test_each_stage_keys_on_the_code_it_runs() -> None:
    """A change to a gate reruns the gates, not the export; one to the
    bundle writer, the bundle only (docs/builds.md, keys)."""
    gsv = "scripts/gptsovits/"
    export, gates = _stage_code("export_t2s"), _stage_code("gates_cpu")
    bundle, tables = _stage_code("bundle"), _stage_code("tables")
    assert f"{gsv}export/graphs.py" in export
    assert not _under(export, f"{gsv}verify/", f"{gsv}stages/gates")
    assert f"{gsv}verify/cpu.py" in gates and f"{gsv}export/graphs.py" not in gates
    assert f"{gsv}stages/bundle.py" in bundle and "scripts/common/bundling.py" in bundle
    assert not _under(bundle, f"{gsv}models/", f"{gsv}verify/")
    assert f"{gsv}export/cpu_tables.py" in tables
    assert not _under(tables, f"{gsv}verify/")
    assert f"{gsv}stages/bundle.py" not in export | gates | tables


def _under(files: set[str], *folders: str) -> set[str]:
    return {f for f in files if f.startswith(folders)}


def _copy_source(built_voice: Path, tmp_path: Path) -> Path:
    src = tmp_path / "source"
    shutil.copytree(built_voice / "source", src)
    return src


def _argv(src: Path, tmp_path: Path, *extra: str) -> list[str]:
    voice = voice_at(src)
    return [
        str(voice.logs_dir),
        "--gpt-epoch", "2", "--sovits-epoch", "2",
        "--ref", voice.ref_clip, "--target", "simulator",
        "--out", str(tmp_path / "out"),
        "--bert", str(voice.bert_dir), "--g2pw", str(voice.g2pw_dir),
        "--shapes", "tiny", *extra,
    ]  # fmt: skip


def test_missing_training_file_is_named(
    built_voice: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    src = _copy_source(built_voice, tmp_path)
    voice = voice_at(src)
    missing = voice.logs_dir / "7-sv_cn" / f"{voice.ref_clip}.pt"
    missing.unlink()
    assert build.main(_argv(src, tmp_path)) == 1
    err = capsys.readouterr().err
    assert f"missing {missing}" in err
    assert not (tmp_path / "out.work").exists()  # stopped before any work


def test_missing_checkpoint_is_named(
    built_voice: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    src = _copy_source(built_voice, tmp_path)
    argv = _argv(src, tmp_path)
    argv[argv.index("--gpt-epoch") + 1] = "7"
    assert build.main(argv) == 1
    assert "no GPT checkpoint for epoch 7" in capsys.readouterr().err


def test_aihub_without_client_is_a_clear_error(
    built_voice: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    try:
        import qai_hub  # noqa: F401

        pytest.skip("qai-hub is installed here")
    except ImportError:
        pass
    src = _copy_source(built_voice, tmp_path)
    argv = _argv(src, tmp_path, "--compiler", "aihub")
    argv[argv.index("--target") + 1] = "qcs8550"
    assert build.main(argv) == 1
    assert "pip install qai-hub" in capsys.readouterr().err


def test_manifest_records_qnn_sdk(built_voice: Path) -> None:
    data = yaml.safe_load((built_voice / "bundle" / "voice.yaml").read_text())
    from scripts.common.qnn_compile import qnn_sdk_version

    assert data["qnn_sdk"] == qnn_sdk_version()
    assert data["format"] == 1


def test_aihub_without_credentials_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Only our credential check runs: the client module is never called."""
    monkeypatch.setitem(sys.modules, "qai_hub", types.ModuleType("qai_hub"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv(aihub.TOKEN_ENV, raising=False)
    with pytest.raises(aihub.AiHubUnavailable, match="qai-hub configure"):
        aihub.check_available("qcs8550")
    with pytest.raises(aihub.AiHubUnavailable, match="real device"):
        aihub.check_available("simulator")


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (
            ["--sv", "sv.ckpt"],
            "--sv makes the zero-shot graphs, which also need --hubert",
        ),
        (["--hubert", "."], "--hubert .: missing config.json"),
        (
            ["--hubert", "{hubert}", "--sv", "nowhere.ckpt"],
            "--sv nowhere.ckpt: no such",
        ),
    ],
)
def test_zero_shot_inputs_are_checked_first(
    built_voice: Path, tmp_path: Path, capsys: pytest.CaptureFixture, extra, words
) -> None:
    hubert = tmp_path / "hubert"
    hubert.mkdir()
    (hubert / "config.json").write_text("{}")
    argv = _argv(built_voice / "source", tmp_path)
    argv += [x.format(hubert=hubert) for x in extra]
    assert build.main(argv) == 1
    assert words in capsys.readouterr().err
    assert not (tmp_path / "out.work").exists()  # stopped before any work


def test_a_zero_shot_build_adds_the_reference_graphs(gsv_clone_voice: Path) -> None:
    bundle = Bundle.load(gsv_clone_voice / "bundle")
    assert set(bundle.graphs) == KEYS | set(layout.REFERENCE_GRAPHS)
    params = layout.GsvParams.from_mapping(bundle.params)
    assert params.reference is not None
    assert params.reference.sv_dim == params.to_dict()["reference"]["sv_dim"]
    state = json.loads((gsv_clone_voice / "work" / STATE_FILE).read_text())
    assert {"export_reference", "gates_reference"} <= set(state)


def test_board_target_keeps_one_t2s_weight_copy(
    request: pytest.FixtureRequest,
) -> None:
    """qcs8550 shares weights (its target profile): prefill and every decode
    bucket in one binary; the other graphs a binary each, as on the simulator."""
    from daemon.sdk.verify import verify_bundle
    from scripts.gptsovits.synthetic.build import make_test_voice

    root = Path(request.config.cache.mkdir(GSV_VOICES))
    bundle = Bundle.load(make_test_voice(root, target="qcs8550", sim_gates=False))
    t2s = {k for k in bundle.graphs if k.startswith("t2s_")}
    assert t2s == {
        layout.T2S_PREFILL,
        *(layout.t2s_decode_key(n) for n in TINY.kv_buckets),
    }
    files = {k: g.file for k, g in bundle.graphs.items()}
    assert {files[k] for k in t2s} == {f"graphs/shared_{layout.T2S_PREFILL}.bin"}
    assert all(files[k] == f"graphs/{k}.bin" for k in set(files) - t2s)
    assert verify_bundle(bundle) == []


def test_an_overlap_below_the_vocoders_reach_is_refused_first(
    built_voice: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The overlap is checked against the generator's
    receptive radius (from its config) before any export, with the numbers."""
    import dataclasses

    from scripts.gptsovits.export import shapes as shapes_mod

    narrow = dataclasses.replace(shapes_mod.TINY, gen_overlap=2)
    monkeypatch.setitem(build.SHAPES, "tiny", narrow)
    assert build.main(_argv(built_voice / "source", tmp_path)) == 1
    err = capsys.readouterr().err
    assert "vits_gen: window overlap 2 frames is less than the vocoder's" in err
    assert "use overlap >=" in err
    assert not (tmp_path / "out.work").exists()  # stopped before any work
