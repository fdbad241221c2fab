"""gpt-sovits-v2pro ``params``: read by the one reader, errors name the field."""

from __future__ import annotations

import pytest

from daemon.engine.reader import ReadError
from daemon.engines.gptsovits.layout import GsvParams

GOOD = {
    "width": 512, "layers": 2, "heads": 8, "head_dim": 64, "vocab": 1025, "eos": 1024,
    "phone_vocab": 732, "prefill_len": 64, "kv_buckets": [256, 128],
    "max_new_tokens": 100, "vits_frames": 200, "vits_phones": 64, "vits_hidden": 192,
    "ssl_dim": 768, "gin": 1024, "hop": 640, "gen_window": 32, "gen_overlap": 4,
    "noise_scale": 0.5, "bert_tokens": 128, "bert_dim": 1024, "g2pw_rows": 8,
    "g2pw_tokens": 64, "mask_value": -100.0, "top_k": 15, "top_p": 1.0,
    "temperature": 1, "repetition_penalty": 1.35, "eos_block_steps": 0,
}  # fmt: skip


def test_round_trip_sorts_the_buckets():
    p = GsvParams.from_mapping(GOOD)
    assert p.kv_buckets == (128, 256) and p.temperature == 1.0
    assert GsvParams.from_mapping(p.to_dict()) == p


@pytest.mark.parametrize(
    "change, message",
    [
        ({"width": "512"}, "width: expected an integer >= 1, found '512'"),
        ({"eos": True}, "eos: expected an integer >= 0, found True"),
        ({"kv_buckets": []}, "kv_buckets: expected a non-empty list, found []"),
        ({"head_dim": 32}, "head_dim: expected width / heads = 64, found 32"),
        ({"top_p": None}, "top_p: expected a number, found nothing (missing field)"),
        (
            {"kv_bucket": [1]},
            f"expected only the fields {sorted(GOOD)}, found unknown field(s) "
            "['kv_bucket']",
        ),
    ],
)
def test_bad_params_name_the_field(change, message):
    data = {k: v for k, v in {**GOOD, **change}.items() if v is not None}
    with pytest.raises(ReadError) as info:
        GsvParams.from_mapping(data, "voice.yaml: params")
    assert str(info.value) == f"voice.yaml: params: {message}"
