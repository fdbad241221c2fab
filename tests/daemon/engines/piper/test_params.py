"""piper-vits bundle params: round trip, field-named errors, per-request scales."""

from __future__ import annotations

import pytest

from daemon.engines.piper.params import PiperParams, Scales
from daemon.sdk.bundles.manifest import BundleError

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


PROVENANCE = {
    "source": {"file": "v.onnx", "sha256": "ab"},
    "sdp_max_abs_err": 1e-5,
    "vocoder_radius_frames": 10.58,
}


#: How the voice's audio leaves (output.py), with piper-tts's defaults.
OUTPUT = {"sentence_silence": 0.0, "normalize_audio": True}
CREDIT = "attribution"


def test_round_trip() -> None:
    params = PiperParams.from_dict(GOOD)
    assert PiperParams.from_dict(params.to_dict()) == params
    assert PiperParams.from_dict({**GOOD, **PROVENANCE}) == params
    assert params.vowel_clusters == (("a", "ɪ"),)
    assert {k: params.to_dict()[k] for k in OUTPUT} == OUTPUT  # piper's defaults
    custom = PiperParams.from_dict({**GOOD, "sentence_silence": 0.25,
                                    "normalize_audio": False})  # fmt: skip
    assert (custom.sentence_silence, custom.normalize_audio) == (0.25, False)
    assert PiperParams.from_dict(custom.to_dict()) == custom
    assert params.graph_keys == (
        "enc_P64",
        "enc_P128",
        "flow_F128",
        "flow_F256",
        "dec_W96",
    )


def test_a_build_with_first_and_tail_windows_needs_each_decoder_size() -> None:
    window = {"frames": 168, "overlap": 12, "first": 32, "sizes": [64, 96, 128]}
    params = PiperParams.from_dict({**GOOD, "window": window})
    assert (params.window, params.first_window) == (168, 32)
    assert params.decoder_sizes == (32, 64, 96, 128, 168)
    assert [k for k in params.graph_keys if k.startswith("dec_")] == [
        "dec_W32", "dec_W64", "dec_W96", "dec_W128", "dec_W168",
    ]  # fmt: skip
    assert params.graph_needs()["dec_W32"]["z"] == (1, 192, 32)
    assert PiperParams.from_dict(params.to_dict()) == params
    # a bundle from before first/steady decoder sizes has one: first = steady
    assert PiperParams.from_dict(GOOD).decoder_sizes == (96,)


@pytest.mark.parametrize(
    "change, message",
    [
        (
            {"window": {"frames": 96, "overlap": 12, "first": 24}},
            "window.first: expected sizes above 2 * overlap = 24, found 24",
        ),
        (
            {"window": {"frames": 96, "overlap": 12, "sizes": [64, 20]}},
            "window.sizes: expected sizes above 2 * overlap = 24, found [64, 20]",
        ),
        ({"hop": None}, "hop: expected an integer >= 1, found nothing (missing field)"),
        ({"hop": 0}, "hop: expected an integer >= 1, found 0"),
        (
            {"sentence_silence": -0.1},
            "sentence_silence: expected a number in [0, 10.0], found -0.1",
        ),
        (
            {"normalize_audio": "yes"},
            "normalize_audio: expected a boolean, found 'yes'",
        ),
        ({"noise_w": "high"}, "noise_w: expected a number in [0, 2.0], found 'high'"),
        (
            {"length_scale": float("inf")},
            "length_scale: expected a finite number > 0, found inf",
        ),
        (
            {"phoneme_buckets": [128, 64]},
            "phoneme_buckets: expected increasing sizes, found [128, 64]",
        ),
        (
            {"phoneme_buckets": [0, 64]},
            "phoneme_buckets[0]: expected an integer >= 1, found 0",
        ),
        (
            {"phoneme_type": "pinyin"},
            "phoneme_type: expected one of ['espeak', 'text'], found 'pinyin'",
        ),
        (
            {"phoneme_id_map": {"_": [0], "^": [1]}},
            "phoneme_id_map: expected entries for ['_', '^', '$'], found no ['$']",
        ),
        (
            {"phoneme_id_map": {"_": [0], "^": [1], "$": "2"}},
            "phoneme_id_map['$']: expected a list, found '2'",
        ),
        (
            {"phoneme_id_map": {"_": [0], "^": [-1], "$": [2]}},
            "phoneme_id_map['^'][0]: expected an integer >= 0, found -1",
        ),
        (
            {"window": {"frames": 24, "overlap": 12}},
            "window.overlap: expected less than frames / 2 (12), found 12",
        ),
        (
            {"window": {"frames": 24}},
            "window.overlap: expected an integer >= 0, found nothing (missing field)",
        ),
        (
            {"frame_buckets": [64]},
            "frame_buckets: expected a largest bucket > 2 * flow_context = 64, "
            "found [64]",
        ),
        ({"sdp": ""}, "sdp: expected a non-empty string, found ''"),
        (
            {"attribution": {"name": "x"}},
            "attribution.url: expected a non-empty string, "
            "found nothing (missing field)",
        ),
        (
            {"sdp_file": "x"},
            f"expected only the fields {sorted([*GOOD, *PROVENANCE, *OUTPUT, CREDIT])}"
            ", "
            "found unknown field(s) ['sdp_file']",
        ),
    ],
)
def test_bad_params_name_the_field(change: dict, message: str) -> None:
    data = {k: v for k, v in {**GOOD, **change}.items() if v is not None}
    with pytest.raises(BundleError) as info:
        PiperParams.from_dict(data)
    assert str(info.value) == f"params: {message}"


def test_scales_speed_divides_length_and_extra_overrides() -> None:
    params = PiperParams.from_dict(GOOD)
    assert Scales.for_request(params, 1.0, {}) == Scales(0.667, 1.0, 0.8)
    fast = Scales.for_request(params, 2.0, {"noise_scale": 0, "length_scale": 1.5})
    assert fast == Scales(0.0, 0.75, 0.8)
    raw = Scales.for_request(params, 1.0, {"normalize_audio": False})
    assert raw == Scales(0.667, 1.0, 0.8, normalize_audio=False)


@pytest.mark.parametrize(
    "extra, message",
    [
        (
            {"top_k": 3},
            "expected only the fields ['length_scale', 'noise_scale', 'noise_w', "
            "'normalize_audio'], "
            "found unknown field(s) ['top_k']",
        ),
        (
            {"noise_w": -0.1},
            "noise_w: expected a number in [0, 2.0] or null, found -0.1",
        ),
        (
            {"noise_scale": float("nan")},
            "noise_scale: expected a number in [0, 2.0] or null, found nan",
        ),
        (
            {"noise_scale": 2.5},
            "noise_scale: expected a number in [0, 2.0] or null, found 2.5",
        ),
        (
            {"noise_scale": True},
            "noise_scale: expected a number in [0, 2.0] or null, found True",
        ),
        ({"length_scale": 0}, "length_scale: expected a number > 0 or null, found 0"),
    ],
)
def test_bad_request_scales_are_refused(extra: dict, message: str) -> None:
    with pytest.raises(ValueError) as info:
        Scales.for_request(PiperParams.from_dict(GOOD), 1.0, extra)
    assert str(info.value) == f"piper-vits: {message}"
