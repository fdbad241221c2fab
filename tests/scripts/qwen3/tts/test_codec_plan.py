"""The codec schedule's contexts from the decoder's receptive field
(scripts/qwen3/tts/codec_plan.py): the default schedule is upstream's decode,
the old short-context ramp was not, and what each costs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scripts.common.floor import FLOOR_MARGIN_DB
from scripts.qwen3.tts import codec_plan
from scripts.qwen3.tts import windows as w
from scripts.qwen3.tts.pipeline.options import (
    CODEC_WINDOWS,
    FIRST_FRAMES,
    parse_windows,
)
from tests.qwen3_fixtures import require_qwen_tts

SPF = 1920
#: the schedule the build chose before contexts came from the receptive field
OLD = [(40, 12), (100, 8)]


@pytest.fixture(scope="module")
def codec(tiny_tts_custom: Path) -> Iterator[Any]:
    require_qwen_tts()
    from scripts.qwen3.tts.oracle_audio import load_codec
    from scripts.qwen3.tts.upstream import torch_threads

    with torch_threads(1):
        yield load_codec(tiny_tts_custom / "speech_tokenizer")


def test_contexts_come_from_the_receptive_field(codec: Any) -> None:
    cfg = w.decoder_config(codec)
    assert codec_plan.needed_context(cfg) == 154  # 2 layers x 71 + convs
    # capped so a call keeps a quarter of its frames new; given ones kept
    assert codec_plan.plan(CODEC_WINDOWS, cfg) == [(40, 30), (100, 75), (325, 154)]
    assert codec_plan.plan(parse_windows("16:6,200"), cfg) == [(16, 6), (200, 150)]


def test_exactness_is_the_context_rule() -> None:
    need = 154
    assert codec_plan.exact([(40, 30), (100, 75), (325, 154)], 8, need)
    assert not codec_plan.exact(OLD, 8, need)
    # a window short of the field is exact only while the stream is young
    assert codec_plan.exact([(200, 150)], 8, need, n=150)
    assert not codec_plan.exact([(200, 150)], 8, need, n=400)
    assert codec_plan.frames_per_kept([(325, 25)], 300, 600) == round(650 / 600, 3)


def test_the_default_schedule_is_upstreams_decode_and_the_old_was_not(
    codec: Any,
) -> None:
    cfg = w.decoder_config(codec)
    chosen = codec_plan.plan(CODEC_WINDOWS, cfg)
    new = codec_plan.measure(codec, chosen, FIRST_FRAMES, SPF, 128)
    assert new.exact and new.codes > w.UPSTREAM_CHUNK
    assert new.snr_db >= new.upstream_floor_db - FLOOR_MARGIN_DB, new
    assert new.steady_frames_per_kept < 1.2 and new.first_audio_s > 0
    old = codec_plan.measure(codec, OLD, FIRST_FRAMES, SPF, 128)
    assert not old.exact and old.snr_db < 30, old
