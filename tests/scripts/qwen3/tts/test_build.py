"""build_tts_qwen3 on the tiny checkpoints: TTS bundles that verify, whose
params, tables and tokenizer are the checkpoint's and upstream's, their gates
recorded (the command line on a fresh build: test_build_command.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from daemon.cli.bundle import main as bundle_cli
from daemon.engines.qwen3.tts import params as layout
from daemon.engines.qwen3.tts.params import TtsParams
from daemon.sdk.bundles.manifest import Bundle
from daemon.sdk.verify import verify_bundle
from scripts.common.build.run import STATE_FILE
from scripts.common.build.stage import from_json
from scripts.qwen3.tts.stages.gates_cpu import CpuGates
from scripts.qwen3.tts.stages.gates_sim import SimGates
from scripts.qwen3.tts.stages.schedule import Windows
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
    cpu = from_json(state["gates_cpu"]["result"], CpuGates).gates
    sim = from_json(state["gates_sim"]["result"], SimGates).gates
    assert set(cpu) == set(keys)
    for key in CODECS:  # every window's fp16 range, on the CPU
        assert any(g.metric.startswith("fp16 range share") for g in cpu[key])
    for gates in (*cpu.values(), *sim.values()):
        assert gates and all(g.passed for g in gates)
    up = cpu["codec_325"][-1]
    # bound by upstream float32's own SNR to float64 on the same codes
    assert up.metric.startswith(
        "SNR dB vs float64 decode, in upstream's 300+25 chunking (upstream float32: "
    )
    assert 100 < up.threshold <= up.value
    assert set(sim) >= {"text_proj", f"talker_decode_{L}", "cp_step"}
    # the same codec: gated once, and only the window the fixture lists
    assert [k for k in sim if k in CODECS] == (["codec_4"] if which == "custom" else [])
    if which == "custom":
        assert {g.metric for g in sim["codec_4"]} == {
            "simulator cosine (min)",
            "simulator SNR dB (whole window)",
        }
    for f in (93, 187) if which == "base" else ():
        # three clip lengths on the CPU; one on the simulator, its rel reported
        assert len(cpu[f"speaker_{f}"]) == 3
        metrics = [g.metric for g in sim[f"speaker_{f}"]]
        assert metrics[0] == "simulator cosine (min)"
        assert metrics[1].startswith("simulator rel error vs upstream")
    assert {g.metric for g in sim[f"talker_decode_{L}"]} >= {"simulator cosine (min)"}
    windows = from_json(state["windows"]["result"], Windows)
    given = [(4, 2), (8, 4), (16, 6)]
    chosen = [(w.frames, w.context) for w in windows.codec.windows]
    assert chosen == given  # given contexts are kept
    sched = windows.schedule
    assert sched.first_frames == 4 and sched.receptive_field == 154
    assert not sched.exact  # 6 frames of context, 154 needed: said so
    assert windows.codec.stream_snr_db == sched.snr_db < 20
