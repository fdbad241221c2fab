"""gpt-sovits-v2pro ``params``: read by the one reader, errors name the field."""

from __future__ import annotations

import pytest

from daemon.config.reader import ReadError
from daemon.engines.gptsovits.layout import REFERENCE_GRAPHS, GsvParams, graph_needs

GOOD = {
    "width": 512, "layers": 2, "heads": 8, "head_dim": 64, "vocab": 1025, "eos": 1024,
    "phone_vocab": 732, "prefill_len": 64, "kv_buckets": [256, 128],
    "max_new_tokens": 100, "vits_frames": 200, "vits_phones": 64, "vits_hidden": 192,
    "ssl_dim": 768, "gin": 1024, "hop": 640, "gen_window": 32, "gen_overlap": 4,
    "noise_scale": 0.5, "bert_tokens": 128, "bert_dim": 1024, "g2pw_rows": 8,
    "g2pw_tokens": 64, "mask_value": -100.0, "top_k": 15, "top_p": 1.0,
    "temperature": 1, "repetition_penalty": 1.35, "eos_block_steps": 0,
}  # fmt: skip


REFERENCE = {"hubert_samples": 169600, "spec_frames": 500, "fbank_frames": 998,
             "sv_dim": 20480}  # fmt: skip


def test_round_trip_sorts_the_buckets():
    p = GsvParams.from_mapping(GOOD)
    assert p.kv_buckets == (128, 256) and p.temperature == 1.0
    assert GsvParams.from_mapping(p.to_dict()) == p
    assert p.reference is None and "reference" not in p.to_dict()


def test_reference_sizes_round_trip():
    p = GsvParams.from_mapping({**GOOD, "reference": REFERENCE})
    assert p.reference is not None and p.reference.fbank_frames == 998
    assert p.to_dict()["reference"] == REFERENCE
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
            {"reference": {**REFERENCE, "sv_dim": 0}},
            "reference.sv_dim: expected an integer >= 1, found 0",
        ),
        (
            {"kv_bucket": [1]},
            f"expected only the fields {sorted([*GOOD, 'reference'])}, found "
            "unknown field(s) "
            "['kv_bucket']",
        ),
    ],
)
def test_bad_params_name_the_field(change, message):
    data = {k: v for k, v in {**GOOD, **change}.items() if v is not None}
    with pytest.raises(ReadError) as info:
        GsvParams.from_mapping(data, "voice.yaml: params")
    assert str(info.value) == f"voice.yaml: params: {message}"


def test_a_bundle_with_reference_sizes_needs_all_four_graphs():
    plain = graph_needs(GsvParams.from_mapping(GOOD), {})
    cloning = graph_needs(GsvParams.from_mapping({**GOOD, "reference": REFERENCE}), {})
    assert not set(REFERENCE_GRAPHS) & set(plain)
    assert set(cloning) - set(plain) == set(REFERENCE_GRAPHS)
