"""The windows benchmark compares the former single window with the build's."""

from __future__ import annotations

import pytest

pytest.importorskip("onnx")

from scripts.bench.piper.windows import BEFORE_WINDOW, schedules  # noqa: E402
from scripts.piper.convert import ConvertOptions  # noqa: E402


def test_before_is_one_window_and_after_is_the_build_default() -> None:
    before, after = schedules()
    assert (before.window, before.first, before.sizes) == (BEFORE_WINDOW, None, ())
    o = ConvertOptions()
    assert (after.window, after.first, after.sizes) == (
        o.window,
        o.first_window,
        o.window_sizes,
    )
    assert "after first 64, steady 168" in after.name
