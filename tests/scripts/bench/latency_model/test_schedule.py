"""schedule.py: call counts follow the engines' schedules."""

from __future__ import annotations

import pytest

from daemon.sdk.audio.windows import OVERLAP_FRAMES, WINDOW_FRAMES, plan
from scripts.bench.latency_model import schedule as s
from scripts.gptsovits.shapes import FULL


def test_gsv_counts_per_sentence():
    sched = s.gsv()
    tokens = round(s.GSV_TOKENS_PER_S * s.SENTENCE_S)
    decode = [k for k in sched.total if k.startswith("t2s_decode_")]
    assert len(decode) == 1 and sched.total[decode[0]] == s.SENTENCES * tokens
    # the bucket holds the prompt + the segment's token cap (engine.py)
    prompt = s.GSV_PROMPT_TOKENS + round(s.GSV_PHONES_PER_S * s.SENTENCE_S)
    assert decode[0] == f"t2s_decode_{FULL.kv_bucket_for(prompt + 250)}"
    assert sched.first["vits_gen"] == 1 and sched.first["t2s_prefill"] == 1
    assert sched.total["vits_enc"] == s.SENTENCES


def test_piper_windows_and_buckets():
    sched = s.piper((64, 128), (128, 512), WINDOW_FRAMES, OVERLAP_FRAMES, 22050, 256)
    frames = round(s.SENTENCE_S * 22050 / 256)
    keep = WINDOW_FRAMES - 2 * OVERLAP_FRAMES
    per = sched.total[f"dec_W{WINDOW_FRAMES}"] // s.SENTENCES
    assert frames / keep <= per <= frames / keep + 1
    assert sched.total["flow_F512"] == s.SENTENCES
    assert sum(sched.first.values()) == 3  # encoder, flow, one decoder window


def test_piper_first_and_tail_window_sizes():
    sched = s.piper(
        (64,),
        (512,),
        168,
        OVERLAP_FRAMES,
        22050,
        256,
        first=64,
        sizes=(64, 96, 128, 168),
    )
    assert sched.first["dec_W64"] == 1 and "dec_W168" not in sched.first
    frames = round(s.SENTENCE_S * 22050 / 256)
    calls = sum(n for k, n in sched.total.items() if k.startswith("dec_W"))
    # the windows the engine runs (windows.plan) for the sentence
    assert calls // s.SENTENCES == len(
        plan(frames, (64, 96, 128, 168), OVERLAP_FRAMES, first=64)
    )


def test_rtf_and_ttfa_from_per_call_seconds():
    sched = s.qwen3_asr()
    per = {"encoder": 0.05, "prefill_512": 0.1, "decode_1024": 0.02}
    total = sum(n * per[k] for k, n in sched.total.items())
    assert sched.rtf(per) == pytest.approx(total / sched.audio_s)
    assert sched.ttfa(per) == pytest.approx(
        sched.first["encoder"] * 0.05 + sched.first["prefill_512"] * 0.1
    )


def test_qwen3_tts_steps_per_frame():
    sched = s.qwen3_tts()
    assert sched.total["cp_step"] == 16 * sched.total["talker_decode_1024"]
    assert sched.first["talker_decode_1024"] == 8
