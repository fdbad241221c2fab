"""Additive masks: exact values, written in place into bound buffers."""

from __future__ import annotations

import numpy as np
import pytest

from daemon.sdk.ar import masks

V = -100.0


def test_prefix_causal_values() -> None:
    out = np.ones((1, 1, 7, 7), np.float32)
    buffer = out
    masks.prefix_causal(out, n_prefix=3, n_causal=2, value=V)
    assert out is buffer
    o, x = 0.0, V
    want = [
        [o, o, o, x, x, x, x],  # prefix rows: the prefix, never the causal part
        [o, o, o, x, x, x, x],
        [o, o, o, x, x, x, x],
        [o, o, o, o, x, x, x],  # causal rows: the prefix and up to their own
        [o, o, o, o, o, x, x],
        [x, x, x, x, x, x, x],  # padding
        [x, x, x, x, x, x, x],
    ]
    np.testing.assert_array_equal(out[0, 0], want)


def test_causal_is_a_prefix_of_zero() -> None:
    out = np.zeros((2, 4, 4), np.float32)
    masks.causal(out, 3, V)
    for square in out:  # every leading index
        np.testing.assert_array_equal(
            square[:3, :3], np.where(np.tri(3, dtype=bool), 0.0, V)
        )
        assert (square[3] == V).all() and (square[:, 3] == V).all()


def test_decode_row() -> None:
    row = np.zeros((1, 1, 1, 5), np.float32)
    masks.open_prefix(row, 2, V)
    np.testing.assert_array_equal(row[0, 0, 0], [0.0, 0.0, V, V, V])


def test_masks_refuse_what_does_not_fit() -> None:
    with pytest.raises(ValueError, match="do not fit"):
        masks.prefix_causal(np.zeros((1, 1, 4, 4)), 3, 2, V)
    with pytest.raises(ValueError, match="exceed the KV length 5"):
        masks.open_prefix(np.zeros(5), 6, V)
