"""The GPT-SoVITS build on the test voice: the bundle per layout.py, every
gate recorded and passed, the zero-shot and board variants."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from daemon.engines.gptsovits import layout
from daemon.engines.gptsovits.frontend import G2pwHead, G2pwTables
from daemon.sdk.bundles.manifest import Bundle
from scripts.common.build.run import STATE_FILE
from scripts.gptsovits.export.cpu_tables import TABLE_FILES
from scripts.gptsovits.shapes import TINY
from scripts.gptsovits.synthetic.build import VOICE
from scripts.gptsovits.synthetic.voice import TINY_BERT_DIM
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


def test_manifest_records_qnn_sdk(built_voice: Path) -> None:
    data = yaml.safe_load((built_voice / "bundle" / "voice.yaml").read_text())
    from scripts.common.qnn_compile import qnn_sdk_version

    assert data["qnn_sdk"] == qnn_sdk_version()
    assert data["format"] == 1


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
