"""Simulator-gate metrics and failure messages."""

from __future__ import annotations

import numpy as np
import pytest

from scripts.gsv import sim_verify
from scripts.gsv.verify import GateError


def test_topk_agreement() -> None:
    rng = np.random.default_rng(0)
    ref = rng.standard_normal((4, 100))
    assert sim_verify.topk_agreement(ref + 1e-6, ref) == 1.0
    swapped = ref.copy()
    order = np.argsort(ref[0])
    swapped[0, order[-1]] = ref[0, order[0]] - 1.0  # the best drops out of the top
    assert sim_verify.topk_agreement(swapped, ref) == 0.75


def test_cosine() -> None:
    a = np.array([1.0, 2.0, 3.0])
    assert sim_verify.cosine(a, 2 * a) == pytest.approx(1.0)
    assert sim_verify.cosine(a, -a) == pytest.approx(-1.0)


def test_failed_gate_names_graph_metric_threshold() -> None:
    a = np.ones(8, np.float32)
    with pytest.raises(
        GateError, match=r"bert: simulator cosine = -1 fails the gate >= 0\.999"
    ):
        sim_verify._cosine_gate("bert", -a, a, [])
