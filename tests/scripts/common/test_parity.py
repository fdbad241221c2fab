"""One argument order for every parity metric: (reference, test)."""

import numpy as np
import pytest

from scripts.common.parity import cosine, rel_error, snr_db


def test_every_metric_takes_reference_then_test_by_keyword() -> None:
    ref = np.array([1.0, -2.0, 2.0])
    test = ref * 1.1
    # the denominator is the reference: swapping the roles changes the value
    assert rel_error(reference=ref, test=test) == pytest.approx(0.1)
    assert rel_error(reference=test, test=ref) == pytest.approx(0.1 / 1.1)
    assert rel_error(ref, test) == rel_error(reference=ref, test=test)
    # |ref|² / |0.1 ref|² = 100 -> 20 dB; the other way round 10 log10(121)
    assert snr_db(reference=ref, test=test) == pytest.approx(20.0)
    assert snr_db(reference=test, test=ref) == pytest.approx(10 * np.log10(121))
    assert cosine(reference=ref, test=-test) == pytest.approx(-1.0)


def test_snr_rejects_mismatched_shapes() -> None:
    with pytest.raises(ValueError, match=r"shape mismatch: \(3,\) vs \(2,\)"):
        snr_db(reference=np.zeros(3), test=np.zeros(2))
