"""The full-size byte counts of scripts/bench/qwen3/tts/sizes.py: the parameter
formulas equal upstream's own modules, and the floor reproduces the design
estimate's weights-only figure from them."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scripts.bench.qwen3.sizes_common import BANDWIDTH_BPS, FP16, INT8
from scripts.bench.qwen3.tts import modules, sizes


def test_the_counts_are_upstreams_modules() -> None:
    pytest.importorskip("torch")
    counted = modules.check(sizes.TINY)
    assert counted["codec"] > 0 and counted["speaker"] > 0
    # a predictor narrower than the talker gets small_to_mtp_projection
    narrow = replace(sizes.TINY, predictor=replace(sizes.TINY.predictor, hidden=32))
    modules.check(narrow)


def test_a_wrong_count_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    real = sizes.layer_params
    monkeypatch.setattr(sizes, "layer_params", lambda b: real(b) + 1)
    with pytest.raises(ValueError, match="parameter counts"):
        modules.check(sizes.TINY)


def test_full_size_weights_are_the_estimated_figures() -> None:
    d = sizes.Dims()
    # docs/qwen3.md, graph set: a full-width layer is 15.7 M params; 28 layers ~ 0.88 GB
    # fp16
    assert sizes.layer_params(d.talker) == 15_730_944
    assert round(FP16 * sizes.talker_params(d) / 1e9, 2) == 0.89
    # one predictor call: 5 layers + the head it selects ~ 161 MB fp16
    call = FP16 * sizes.predictor_params(d, heads=1)
    assert call / 1e6 == pytest.approx(161, abs=1)
    counted = {"codec": 114_323_137, "speaker": 8_854_336}
    parts = dict(sizes.streamed(d, counted))
    weights = (parts["talker weights (decode graph)"]
               + parts["predictor weights x 16 (5 layers + 1 head)"])  # fmt: skip
    rtf = weights * sizes.FRAMES_PER_S / BANDWIDTH_BPS
    assert rtf == pytest.approx(0.675, abs=0.01)  # the estimated weights-only RTF
    ms, full_rtf = sizes.floor(sizes.streamed(d, counted))
    assert full_rtf > rtf  # the K/V bucket and the codec add to it
    _, w8 = sizes.floor(sizes.streamed(d, counted, cp_per_param=INT8))
    assert w8 < 0.7 * full_rtf  # the predictor is most of a frame's traffic
