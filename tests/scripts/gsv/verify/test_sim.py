"""Simulator-gate metrics and failure messages."""

from __future__ import annotations

import numpy as np
import pytest

from scripts.gsv.verify import sim as sim_verify
from scripts.gsv.verify.cpu import GateError


def test_topk_agreement() -> None:
    rng = np.random.default_rng(0)
    ref = rng.standard_normal((4, 100))
    assert sim_verify.topk_agreement(ref + 1e-6, ref) == 1.0
    swapped = ref.copy()
    order = np.argsort(ref[0])
    swapped[0, order[-1]] = ref[0, order[0]] - 1.0  # the best drops out of the top
    assert sim_verify.topk_agreement(swapped, ref) == 0.75


def test_topk_agreement_allows_ties_at_fp16_precision_only() -> None:
    """The test voice's case: the 15th and 16th logits 3.9e-5 apart, swapped by
    fp16 noise, is a tie; a swap across a real gap is not."""
    ref = np.linspace(-1.0, 1.0, 100)
    order = np.argsort(ref)
    k15, k16 = order[-15], order[-16]
    near = ref.copy()
    near[k16] = ref[k15] - 3.9e-5
    flipped = near.copy()
    flipped[k15], flipped[k16] = near[k16], near[k15]  # fp16-sized swap
    assert sim_verify.topk_agreement(flipped[None], near[None]) == 1.0
    far = ref.copy()
    far[k15], far[k16] = ref[k16], ref[k15]  # 0.02 apart: a real disagreement
    assert sim_verify.topk_agreement(far[None], ref[None]) == 0.0


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
