"""The export API's refusals and what it reads off upstream's modules."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from scripts.qwen3.tts.graphs import export
from scripts.qwen3.tts.graphs.talker import no_sliding_window, rope_of


def test_rope_is_read_off_the_modules(tts_custom: Any, tts_base: Any) -> None:
    """theta from each config (the talker's and the predictor's differ in the
    tiny checkpoint as they may in real ones), scaling from the rope init."""
    for model in (tts_custom, tts_base):
        talker = model.talker
        rope = export.talker_rope(model)
        assert rope.theta == talker.config.rope_theta
        assert rope.attention_scaling == talker.model.rotary_emb.attention_scaling
        cp = export.predictor_rope(model)
        assert cp.theta == talker.code_predictor.config.rope_theta
    assert export.groups(tts_custom) == 16


def test_only_the_default_rope_type_is_accepted() -> None:
    rotary = SimpleNamespace(rope_type="yarn", attention_scaling=1.2)
    with pytest.raises(ValueError, match="yarn"):
        rope_of(rotary, SimpleNamespace(rope_theta=1e6))


def test_a_sliding_window_talker_is_refused() -> None:
    with pytest.raises(ValueError, match="sliding_window 4096"):
        no_sliding_window(SimpleNamespace(sliding_window=4096), "talker")
    no_sliding_window(SimpleNamespace(sliding_window=None), "talker")


def test_samples_per_frame_is_upstreams_upsampling(tts_codec: Any) -> None:
    assert export.samples_per_frame(tts_codec) == 1920
