"""piper-vits bundle params: round trip, field-named errors, per-request scales."""

from __future__ import annotations

import pytest

from daemon.engine.bundle import BundleError
from daemon.engines.piper.params import PiperParams, Scales

GOOD = {
    "phoneme_type": "espeak",
    "espeak_voice": "en-us",
    "phoneme_id_map": {"_": [0], "^": [1], "$": [2], "a": [3]},
    "vowel_clusters": [["a", "ɪ"]],
    "noise_scale": 0.667,
    "length_scale": 1,
    "noise_w": 0.8,
    "hop": 256,
    "channels": 192,
    "phoneme_buckets": [64, 128],
    "frame_buckets": [128, 256],
    "flow_context": 32,
    "window": {"frames": 96, "overlap": 12},
    "sdp": "cpu/sdp.npz",
}


def test_round_trip() -> None:
    params = PiperParams.from_dict(GOOD)
    assert PiperParams.from_dict(params.to_dict()) == params
    assert params.vowel_clusters == (("a", "ɪ"),)
    assert params.graph_keys == (
        "enc_P64",
        "enc_P128",
        "flow_F128",
        "flow_F256",
        "dec_W96",
    )


@pytest.mark.parametrize(
    "change, match",
    [
        ({"hop": None}, r"params: missing field 'hop'"),
        ({"hop": 0}, r"params.hop: want an integer >= 1"),
        ({"noise_w": "high"}, r"params.noise_w: want a number"),
        ({"phoneme_buckets": [128, 64]}, "increasing positive sizes"),
        ({"phoneme_type": "pinyin"}, "phoneme_type 'pinyin'"),
        ({"phoneme_id_map": {"_": [0], "^": [1]}}, r"no '\$' entry"),
        ({"phoneme_id_map": {"_": [0], "^": [1], "$": "2"}}, "want a list of ids"),
        ({"window": {"frames": 24, "overlap": 12}}, "leaves no frames"),
        ({"frame_buckets": [64]}, "2 \\* flow_context"),
    ],
)
def test_bad_params_name_the_field(change: dict, match: str) -> None:
    data = {k: v for k, v in {**GOOD, **change}.items() if v is not None}
    with pytest.raises(BundleError, match=match):
        PiperParams.from_dict(data)


def test_scales_speed_divides_length_and_extra_overrides() -> None:
    params = PiperParams.from_dict(GOOD)
    assert Scales.for_request(params, 1.0, {}) == Scales(0.667, 1.0, 0.8)
    fast = Scales.for_request(params, 2.0, {"noise_scale": 0, "length_scale": 1.5})
    assert fast == Scales(0.0, 0.75, 0.8)


@pytest.mark.parametrize(
    "extra, match",
    [
        ({"top_k": 3}, r"unknown option\(s\) \['top_k'\]"),
        ({"noise_w": -0.1}, "noise_w -0.1 outside"),
        ({"noise_scale": float("nan")}, "noise_scale nan outside"),
        ({"noise_scale": True}, "must be a number"),
        ({"length_scale": 0}, "length_scale must be > 0"),
    ],
)
def test_bad_request_scales_are_refused(extra: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Scales.for_request(PiperParams.from_dict(GOOD), 1.0, extra)
