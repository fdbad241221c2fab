"""HTP power votes through the perf infrastructure (accepted by the simulator)."""

from __future__ import annotations

import numpy as np
import pytest

import qnnrt
from qnnrt.power import PowerConfig, open_power


@pytest.mark.parametrize("mode", qnnrt.POWER_MODES)
def test_power_modes_are_voted(bins, mode):
    with qnnrt.Backend(power=mode) as be:
        assert be.power is not None and be.power.mode == mode
        graph = qnnrt.Context.open(be, bins["matmul_tanh"].bin_path).graph()
        assert graph.run({"x": np.ones((1, 64), np.float32)})[0].shape == (1, 64)
    assert be.power.id is None  # destroyed at close


def test_unknown_mode_is_a_value_error():
    with pytest.raises(ValueError, match="expected one of"):
        qnnrt.Backend(power="turbo")


def test_a_rejected_vote_is_a_named_perf_error(backend):
    power = PowerConfig(backend.lib)
    real_id, power.id = power.id, 0xFFFFFFFE  # an id the perf infrastructure never gave
    with pytest.raises(qnnrt.QnnError) as err:
        power.set("burst")
    assert err.value.code == 13001
    assert err.value.name == "QNN_HTP_PERF_INFRASTRUCTURE_ERROR_INVALID_INPUT"
    assert err.value.call == "setPowerConfig"
    power.id = real_id
    power.close()
    assert open_power(backend.lib, None) is None
