"""HTP power votes through the perf infrastructure (QnnHtpPerfInfrastructure.h)."""

from __future__ import annotations

import ctypes as C
import logging
from typing import Final, Literal

from .c import _api as A
from .c._lib import QnnLibrary
from .c.errors import QnnError, check

_LOGGER = logging.getLogger(__name__)

PowerMode = Literal["burst", "sustained", "default"]
POWER_MODES: Final = ("burst", "sustained", "default")

#: createPowerConfigId rejects the "default" 0xFFFFFFFF ids (rc 13001): pass 0, 0.
_DEVICE_ID: Final = 0
_CORE_ID: Final = 0
#: Sleep latency votes in µs (ORT's QNN EP recipes: burst 40, high-performance 100).
_BURST_SLEEP_LATENCY_US: Final = 40
_SUSTAINED_SLEEP_LATENCY_US: Final = 100
_DEFAULT_SLEEP_LATENCY_US: Final = 1000
#: RPC votes for low-latency modes (µs); polling keeps the DSP thread spinning.
_RPC_CONTROL_LATENCY_US: Final = 100
_RPC_POLLING_TIME_US: Final = 9999

#: mode → (powerMode, dcvsEnable, sleep latency, bus+core corner (min, target, max))
_RECIPES: Final = {
    "burst": (
        A.QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_PERFORMANCE,
        0,
        _BURST_SLEEP_LATENCY_US,
        (A.DCVS_VOLTAGE_VCORNER_MAX_VOLTAGE_CORNER,) * 3,
    ),
    "sustained": (
        A.QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_PERFORMANCE,
        0,
        _SUSTAINED_SLEEP_LATENCY_US,
        (A.DCVS_VOLTAGE_VCORNER_TURBO,) * 3,
    ),
    "default": (
        A.QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_ADJUST_UP_DOWN,
        1,
        _DEFAULT_SLEEP_LATENCY_US,
        (
            A.DCVS_VOLTAGE_VCORNER_MIN_VOLTAGE_CORNER,
            A.DCVS_VOLTAGE_VCORNER_SVS,
            A.DCVS_VOLTAGE_VCORNER_TURBO,
        ),
    ),
}


def _dcvs(mode: str, power_id: int) -> A.QnnHtpPerfInfrastructure_PowerConfig_t:
    power_mode, dcvs_enable, sleep_us, corners = _RECIPES[mode]
    cfg = A.QnnHtpPerfInfrastructure_PowerConfig_t()
    cfg.option = A.QNN_HTP_PERF_INFRASTRUCTURE_POWER_CONFIGOPTION_DCVS_V3
    d = cfg.dcvsV3Config
    d.contextId = power_id
    d.setDcvsEnable, d.dcvsEnable, d.powerMode = 1, dcvs_enable, power_mode
    d.setSleepLatency, d.sleepLatency = 1, sleep_us
    d.setSleepDisable, d.sleepDisable = 1, 0
    d.setBusParams, d.setCoreParams = 1, 1
    d.busVoltageCornerMin, d.busVoltageCornerTarget, d.busVoltageCornerMax = corners
    d.coreVoltageCornerMin, d.coreVoltageCornerTarget, d.coreVoltageCornerMax = corners
    return cfg


def _u32(option: int, value: int) -> A.QnnHtpPerfInfrastructure_PowerConfig_t:
    cfg = A.QnnHtpPerfInfrastructure_PowerConfig_t()
    cfg.option = option
    cfg.rpcControlLatencyConfig = value  # every u32 member sits at the union start
    return cfg


class PowerConfig:
    """One power-config id on the HTP; :meth:`set` votes a mode."""

    def __init__(self, lib: QnnLibrary) -> None:
        self._lib = lib
        self.id: int | None = None
        self.mode: str | None = None
        infra_p = C.c_void_p()
        check(
            lib.core("deviceGetInfrastructure")(C.byref(infra_p)),
            "deviceGetInfrastructure",
        )
        infra = A.QnnHtpDevice_Infrastructure_t.from_address(infra_p.value or 0)
        if infra.infraType != A.QNN_HTP_DEVICE_INFRASTRUCTURE_TYPE_PERF:
            raise QnnError(1000, "deviceGetInfrastructure", "no perf infrastructure")
        self._perf = infra.perfInfra
        pid = C.c_uint32()
        check(
            self._perf.createPowerConfigId(_DEVICE_ID, _CORE_ID, C.byref(pid)),
            "createPowerConfigId",
        )
        self.id = pid.value

    def set(self, mode: str) -> None:
        """Vote ``burst``, ``sustained`` or ``default``."""
        if mode not in _RECIPES:
            raise ValueError(f"power mode {mode!r}: expected one of {POWER_MODES}")
        if self.id is None:
            raise RuntimeError("power config is closed")
        configs = [_dcvs(mode, self.id)]
        if mode != "default":
            configs += [
                _u32(
                    A.QNN_HTP_PERF_INFRASTRUCTURE_POWER_CONFIGOPTION_RPC_CONTROL_LATENCY,
                    _RPC_CONTROL_LATENCY_US,
                ),
                _u32(
                    A.QNN_HTP_PERF_INFRASTRUCTURE_POWER_CONFIGOPTION_RPC_POLLING_TIME,
                    _RPC_POLLING_TIME_US,
                ),
            ]
        arr = (
            C.POINTER(A.QnnHtpPerfInfrastructure_PowerConfig_t) * (len(configs) + 1)
        )(*[C.pointer(c) for c in configs])
        check(self._perf.setPowerConfig(self.id, arr), "setPowerConfig", mode)
        self.mode = mode

    def close(self) -> None:
        pid, self.id = self.id, None
        if pid is not None:
            check(self._perf.destroyPowerConfigId(pid), "destroyPowerConfigId")


def open_power(lib: QnnLibrary, mode: str | None) -> PowerConfig | None:
    """A power config voting ``mode``; ``None`` (with a warning) if unsupported."""
    if mode is None:
        return None
    if mode not in _RECIPES:
        raise ValueError(f"power mode {mode!r}: expected one of {POWER_MODES}")
    power = None
    try:
        power = PowerConfig(lib)
        power.set(mode)
        return power
    except QnnError as exc:
        _LOGGER.warning("HTP power mode %r not applied: %s", mode, exc)
        if power is not None:
            power.close()
        return None
