"""A zero-shot print back as the engine's Reference: checked like a bundle's
refs/*.npz, and only for the reference graphs that made it."""

from __future__ import annotations

import types

import numpy as np
import pytest

from daemon.engines.gptsovits.cloning.voiceprint import (
    has_reference_graphs,
    reference_model_id,
    reference_of,
)
from daemon.engines.gptsovits.layout import ENGINE_ID, REFERENCE_GRAPHS, GsvParams
from daemon.sdk.cloning import VoicePrint
from tests.daemon.engines.gptsovits.test_layout import GOOD

P = GsvParams.from_mapping(GOOD)
MODEL = "ab" * 32


def print_(**arrays) -> VoicePrint:
    n, m = 5, 20
    base = {
        "phones": np.arange(n, dtype=np.int32),
        "bert": np.zeros((n, P.bert_dim), np.float32),
        "prompt": np.arange(m, dtype=np.int32),
        "ge": np.ones((1, P.gin, 1), np.float32),
        "ge512": np.ones((1, 512, 1), np.float32),
    }
    meta = {"text": "你好。", "lang": "zh", "prompt_semantic": "hubert"}
    return VoicePrint(ENGINE_ID, MODEL, {**base, **arrays}, meta)


def test_a_print_is_a_reference():
    ref = reference_of(print_(), P, MODEL)
    assert ref.phones.dtype == np.int64 and len(ref.prompt) == 20
    assert (ref.text, ref.lang) == ("你好。", "zh")


@pytest.mark.parametrize(
    ("vp", "model", "words"),
    [
        (print_(), "cd" * 32, "made with reference graphs abababababab, this "
         "bundle's are cdcdcdcdcdcd"),
        (print_(), None, "this bundle's are none"),
        (print_(prompt=np.full(3, 5000, np.int32)), MODEL, "prompt tokens outside"),
        (print_(bert=np.zeros((4, 8), np.float32)), MODEL, "bert (4, 8)"),
        (print_(prompt=np.zeros(P.prefill_len, np.int32)), MODEL, "leave no room"),
    ],
)  # fmt: skip
def test_a_print_that_cannot_speak_here_is_refused(vp, model, words):
    with pytest.raises(ValueError, match=f"{ENGINE_ID}: ") as e:
        reference_of(vp, P, model)
    assert words in str(e.value)


def test_another_engines_print_is_refused():
    vp = print_()
    other = VoicePrint("qwen3-tts", MODEL, vp.arrays, vp.meta)
    with pytest.raises(ValueError, match="a print of engine 'qwen3-tts'"):
        reference_of(other, P, MODEL)


def test_the_model_id_covers_the_four_graphs():
    specs = {k: types.SimpleNamespace(sha256=k * 2) for k in REFERENCE_GRAPHS}
    assert has_reference_graphs(specs) and not has_reference_graphs({"sv": 1})
    a = reference_model_id(specs)
    specs["sv"] = types.SimpleNamespace(sha256="changed")
    assert len(a) == 64 and reference_model_id(specs) != a
