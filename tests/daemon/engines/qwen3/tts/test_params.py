"""The ``qwen3-tts`` params schema: what a bundle must say, and the errors."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from daemon.config.reader import ReadError
from daemon.engines.qwen3.tts.graphio import (
    cp_step_io,
    graph_needs,
    talker_decode_io,
    talker_prefill_io,
)
from daemon.engines.qwen3.tts.params import (
    TtsParams,
    codec_key,
    speaker_key,
    talker_decode_key,
    talker_prefill_key,
)

TEMPLATE = "<|im_start|>assistant\n{text}<|im_end|>\n<|im_start|>assistant\n"
#: tiny-model-like params (codebook 128, talker vocab 1152: specials in the top 1024)
CUSTOM: dict[str, Any] = {
    "kind": "custom_voice",
    "talker": {"hidden": 64, "head_dim": 16, "layers": 2, "kv_heads": 2,
               "vocab": 1152, "rope_theta": 10000.0, "attention_scaling": 1.0},
    "text": {"hidden": 48, "rows": 32, "vocab": 500},
    "predictor": {"hidden": 64, "head_dim": 16, "layers": 2, "kv_heads": 2,
                  "vocab": 128, "groups": 16, "rope_theta": 10000.0,
                  "attention_scaling": 1.0},
    "prefill_buckets": [256, 64],
    "kv_buckets": [192, 384],
    "tokens": {"tts_pad": 490, "tts_bos": 491, "tts_eos": 492, "im_start": 480,
               "assistant": 483, "newline": 10, "codec_pad": 1100,
               "codec_bos": 1101, "codec_eos": 1102, "codec_think": 1103,
               "codec_nothink": 1104, "codec_think_bos": 1105, "codec_think_eos": 1106},
    "prompt": {"template": TEMPLATE,
               "role_tokens": 3, "tail_tokens": 5},
    "languages": {"chinese": 1050, "english": 1051, "german": 1052,
                  "sichuan_dialect": 1053},
    "speakers": {"alice": {"id": 1140, "dialect": None},
                 "bob": {"id": 1141, "dialect": None},
                 "chengdu": {"id": 1142, "dialect": "sichuan_dialect"}},
    "sampling": {"do_sample": True, "top_k": 30, "top_p": 0.95, "temperature": 0.8,
                 "repetition_penalty": 1.1, "min_new_tokens": 2, "max_new_tokens": 300,
                 "subtalker_do_sample": True, "subtalker_top_k": 40,
                 "subtalker_top_p": 1.0, "subtalker_temperature": 0.7,
                 "suppress": [128, 1152]},
    "text_mode": "non_streaming",
    "embedding_dtype": "float32",
    "codec": {"sample_rate": 24000, "samples_per_frame": 1920, "chunk_frames": 300,
              "left_context": 25, "windows": [{"frames": 8, "context": 0},
                                              {"frames": 16, "context": 4}],
              "first_frames": 4},
    "xvector": None,
    "mask_value": -100,
}  # fmt: skip
XVECTOR: dict[str, Any] = {
    "sample_rate": 24000, "n_fft": 1024, "hop": 256, "win": 1024, "pad": 384,
    "n_mels": 128, "fmin": 0, "fmax": 12000, "frame_buckets": [300, 150], "dim": 64,
    "reflect_pad": 4,
}  # fmt: skip


def base() -> dict[str, Any]:
    data = copy.deepcopy(CUSTOM)
    data.update(kind="base", speakers={}, xvector=dict(XVECTOR), text_mode="streaming")
    return data


def changed(
    path: str, value: Any, data: dict[str, Any] | None = None
) -> dict[str, Any]:
    """``data`` (CUSTOM) with the dotted ``path`` set to ``value`` (None: removed)."""
    data = copy.deepcopy(CUSTOM if data is None else data)
    *parents, last = path.split(".")
    node = data
    for key in parents:
        node = node[key]
    if value is None:
        del node[last]
    else:
        node[last] = value
    return data


def test_reads_a_custom_voice_bundle() -> None:
    p = TtsParams.from_mapping(CUSTOM)
    assert p.prefill_buckets == (64, 256) and p.kv_buckets == (192, 384)
    assert p.speakers["chengdu"].dialect == "sichuan_dialect"
    assert p.speakers["alice"].dialect is None
    assert p.sampling.suppress == (128, 1152) and p.sampling.top_k == 30
    assert p.tokens.codec_eos == 1102
    assert p.advertised_languages == ("auto", "chinese", "english", "german")
    assert p.mask_value == -100.0
    assert TtsParams.from_mapping(p.to_dict()) == p


def test_reads_a_base_bundle() -> None:
    p = TtsParams.from_mapping(base())
    assert p.xvector is not None and p.xvector.frame_buckets == (150, 300)
    assert p.speakers == {} and p.text_mode == "streaming"


def test_defaults_are_upstream_ones() -> None:
    data = changed("prompt", None)
    data["sampling"] = {"suppress": [128, 1152]}
    del data["text_mode"]
    p = TtsParams.from_mapping(data)
    s = p.sampling
    assert (s.do_sample, s.top_k, s.top_p, s.temperature) == (True, 50, 1.0, 0.9)
    assert (s.repetition_penalty, s.min_new_tokens, s.max_new_tokens) == (1.05, 2, 2048)
    assert (s.subtalker_top_k, s.subtalker_temperature) == (50, 0.9)
    assert p.prompt.role_tokens == 3 and p.prompt.tail_tokens == 5
    assert p.text_mode == "non_streaming"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            changed("tokens.codec_eos", None),
            "where: tokens.codec_eos: expected an integer >= 0, "
            "found nothing (missing field)",
        ),
        (
            changed("tokens.codec_eos", 100),
            "tokens.codec_eos: expected an id in [128, 1152), found 100",
        ),
        (
            changed("tokens.tts_pad", 500),
            "tokens.tts_pad: expected an id < text vocab 500, found 500",
        ),
        (changed("tokens.codec_bogus", 1), "tokens: expected only the fields"),
        (changed("talker.head_dim", 15), "talker.head_dim: expected an even number"),
        (
            changed("talker.vocab", 1000),
            "talker.vocab: expected at least codebook 128 + 1024",
        ),
        (changed("kind", "voice_design"), "kind: expected"),
        (
            changed("kv_buckets", [64]),
            "kv_buckets: expected a largest bucket > the largest prefill (256)",
        ),
        (
            changed("languages.english", 5),
            "languages.english: expected an id in [128, 1152)",
        ),
        (
            changed("speakers.chengdu.dialect", "wu_dialect"),
            "speakers.chengdu.dialect: expected one of the languages",
        ),
        (
            changed("speakers", {}),
            "speakers: expected at least one speaker (kind custom_voice)",
        ),
        (
            changed("xvector", dict(XVECTOR)),
            "xvector: expected null (kind custom_voice)",
        ),
        (
            changed("xvector", None, base()),
            "xvector: expected the speaker encoder's settings",
        ),
        (
            changed("xvector.dim", 32, base()),
            "xvector.dim: expected the talker hidden 64, found 32",
        ),
        (  # a bundle built when the speaker graphs took clips cut to a bucket
            changed("xvector.reflect_pad", None, base()),
            "xvector.reflect_pad: expected the padding of speaker graphs that "
            "take any clip length (this bundle's graphs predate them: rebuild "
            "it with scripts/build-qwen3-tts), found none",
        ),
        (
            changed("xvector.frame_buckets", [4, 300], base()),
            "xvector.frame_buckets: expected buckets above reflect_pad 4",
        ),
        (
            changed("sampling.suppress", [100, 1152]),
            "sampling.suppress: expected [start, stop] within",
        ),
        (changed("sampling.top_p", 0), "sampling.top_p: expected"),
        (
            changed("prompt.template", "<|im_start|>assistant\n"),
            "prompt.template: expected one {text} field",
        ),
        (
            changed("codec.windows", [{"frames": 8, "context": 8}]),
            "codec.windows[0].context: expected fewer than frames (8), found 8",
        ),
        (
            changed("codec.first_frames", 17),
            "codec.first_frames: expected at most the largest window",
        ),
        (changed("mask_value", 0), "mask_value: expected a negative number"),
        (changed("predictor.groups", 1), "predictor.groups: expected"),
    ],
)
def test_bad_params_name_the_field(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ReadError) as err:
        TtsParams.from_mapping(data, where="where")
    assert message in str(err.value)
    assert str(err.value).startswith("where: ")


def test_graph_needs_cover_every_graph_the_engine_runs() -> None:
    p = TtsParams.from_mapping(CUSTOM)
    needs = graph_needs(p)
    assert set(needs) == {
        "text_proj", "cp_step", "talker_prefill_64", "talker_prefill_256",
        "talker_decode_192", "talker_decode_384", "codec_8", "codec_16",
    }  # fmt: skip
    assert talker_prefill_key(64) == "talker_prefill_64"
    assert talker_decode_key(192) == "talker_decode_192"
    assert codec_key(8) == "codec_8" and speaker_key(300) == "speaker_300"
    assert needs["text_proj"] == {"x": (32, 48), "y": (32, 64)}
    pre = talker_prefill_io(p, 64)
    assert pre["x"] == (1, 64, 64) and pre["k"] == (2, 2, 64, 16)
    assert pre["h"] == (1, 64) and pre["logits"] == (1, 1152) and pre["last"] == (1, 64)
    dec = talker_decode_io(p, 192)
    assert dec["k_cache"] == (2, 2, 192, 16) and dec["k_new"] == (2, 2, 1, 16)
    assert dec["h"] == (1, 64) and dec["mask"] == (1, 1, 1, 192)
    cp = cp_step_io(p)
    assert cp["k_cache"] == (2, 2, 16, 16) and cp["logits"] == (1, 128)
    assert cp["head"] == (1,) and cp["x"] == (1, 1, 64)
    assert needs["codec_16"] == {"codes": (1, 16, 16), "wav": (1, 1, 16 * 1920)}
    b = graph_needs(TtsParams.from_mapping(base()))
    assert b["speaker_150"] == {"mel": (1, 150, 128), "valid": (1, 150),
                                "reflect": (158,), "xvec": (1, 64)}  # fmt: skip
    assert "speaker_300" in b
