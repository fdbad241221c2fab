"""One measured parity gate, as every build reports it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GateResult:
    """One measured gate: `passed` is `value` against `threshold` (`at_least`:
    a lower bound, else an upper one)."""

    name: str
    metric: str
    value: float
    threshold: float
    at_least: bool

    @property
    def passed(self) -> bool:
        if self.at_least:
            return self.value >= self.threshold
        return self.value < self.threshold

    def __str__(self) -> str:
        op = ">=" if self.at_least else "<"
        verdict = "pass" if self.passed else "FAIL"
        bound = f"{op} {self.threshold:g}"
        return f"{self.name}: {self.metric} {self.value:.6g} ({bound}) {verdict}"
