"""Backend creation options against the real simulator."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import qnnrt
from qnnrt.c import log as qnn_log


def test_soc_model_device_config_is_accepted(bins):
    # SM8550 (43) → v73: written at both struct offsets (2.43 and 2.51 layouts).
    with qnnrt.Backend(soc_model=43) as be:
        graph = qnnrt.Context.open(be, bins["matmul_tanh"].bin_path).graph()
        assert graph.run({"x": np.ones((1, 64), np.float32)})[0].shape == (1, 64)


def test_unknown_soc_model_is_a_clear_device_error():
    with pytest.raises(qnnrt.QnnError) as err:
        qnnrt.Backend(soc_model=9999)
    assert err.value.call == "deviceCreate"
    assert err.value.code == 14001 and "soc_model=9999" in str(err.value)


def test_bad_log_level_is_refused_before_any_handle():
    with pytest.raises(ValueError, match="log level 'loud'"):
        qnnrt.Backend(log_level="loud")


def test_native_warnings_reach_the_debug_log_once_each(bins, caplog):
    qnn_log._seen_warnings.clear()  # "once" is per process: start afresh
    with caplog.at_level("DEBUG", logger="qnnrt.native"):
        for _ in range(2):
            with qnnrt.Backend() as be:
                qnnrt.Context.open(be, bins["matmul_tanh"].bin_path)
    warned = [r for r in caplog.records if "<W>" in r.getMessage()]
    assert warned, "the simulator warns on every context; none reached the log"
    assert {r.levelno for r in warned} == {logging.DEBUG}
    texts = [r.getMessage().split("<W>")[-1].strip() for r in warned]
    assert len(texts) == len(set(texts)), texts  # the second load repeats none
