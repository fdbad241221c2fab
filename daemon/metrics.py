"""Service metrics and their Prometheus text exposition (format version 0.0.4).

Counters and histograms are updated on the event-loop thread only, so they need
no locks; gauges that live elsewhere (queue depth, NPU time) are read through
callbacks when ``/metrics`` is scraped.  The exposition is a few lines of text,
so it is written here rather than pulling in a client library with a global
registry.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final

CONTENT_TYPE: Final = "text/plain; version=0.0.4; charset=utf-8"
PREFIX: Final = "hexvoice"
#: Time to first audio (s): interactive use cares about 0.1-1 s.
TTFA_BUCKETS: Final = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
#: Real-time factor (synthesis seconds per audio second).
RTF_BUCKETS: Final = (0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 2.0)
PROTOCOLS: Final = ("wyoming", "http")
OUTCOMES: Final = ("ok", "busy", "cancelled", "timeout", "bad_request", "error")
RELOAD_OUTCOMES: Final = ("ok", "failed")


@dataclass
class Histogram:
    buckets: tuple[float, ...]
    counts: list[int] = field(default_factory=list)
    total: float = 0.0
    n: int = 0

    def __post_init__(self) -> None:
        self.counts = [0] * len(self.buckets)

    def observe(self, value: float) -> None:
        i = bisect_left(self.buckets, value)
        if i < len(self.counts):
            self.counts[i] += 1
        self.total += value
        self.n += 1

    def lines(self, name: str, labels: str) -> Iterable[str]:
        cum = 0
        sep = "," if labels else ""
        for le, c in zip(self.buckets, self.counts):
            cum += c
            yield f'{name}_bucket{{{labels}{sep}le="{le}"}} {cum}'
        yield f'{name}_bucket{{{labels}{sep}le="+Inf"}} {self.n}'
        yield f"{name}_sum{{{labels}}} {_num(self.total)}"
        yield f"{name}_count{{{labels}}} {self.n}"


class Metrics:
    """Everything ``/metrics`` reports; one instance per service."""

    def __init__(self) -> None:
        self.requests: defaultdict[tuple[str, str], int] = defaultdict(int)
        self.ttfa: dict[str, Histogram] = {}
        self.rtf = Histogram(RTF_BUCKETS)
        self.audio_seconds = 0.0
        self.synthesis_seconds = 0.0
        self.cancel_lag_calls = 0
        self.cancel_lag_seconds = 0.0
        self.reloads = dict.fromkeys(RELOAD_OUTCOMES, 0)
        #: 1 until a reload fails (the start-up load succeeded, or we would not run)
        self.last_reload_success = 1
        self.gauges: dict[str, tuple[str, Callable[[], float]]] = {}

    def request(self, protocol: str, outcome: str) -> None:
        self.requests[(protocol, outcome)] += 1

    def first_audio(self, protocol: str, seconds: float) -> None:
        self.ttfa.setdefault(protocol, Histogram(TTFA_BUCKETS)).observe(seconds)

    def synthesized(self, audio_s: float, wall_s: float) -> None:
        self.audio_seconds += audio_s
        self.synthesis_seconds += wall_s
        if audio_s > 0:
            self.rtf.observe(wall_s / audio_s)

    def cancelled_after(self, graph_calls: int, seconds: float) -> None:
        """How much NPU work ran between a cancel and the worker being free."""
        self.cancel_lag_calls = graph_calls
        self.cancel_lag_seconds = seconds

    def reloaded(self, ok: bool) -> None:
        self.reloads["ok" if ok else "failed"] += 1
        self.last_reload_success = int(ok)

    def gauge(self, name: str, help_: str, read: Callable[[], float]) -> None:
        self.gauges[name] = (help_, read)

    def render(self) -> str:
        p = PREFIX
        out: list[str] = []

        def head(name: str, kind: str, help_: str) -> None:
            out.append(f"# HELP {p}_{name} {help_}")
            out.append(f"# TYPE {p}_{name} {kind}")

        head("requests_total", "counter", "Synthesis requests by protocol and outcome.")
        protocols = sorted({proto for proto, _ in self.requests} | set(PROTOCOLS))
        for proto in protocols:
            for outcome in OUTCOMES:
                n = self.requests.get((proto, outcome), 0)
                out.append(
                    f'{p}_requests_total{{protocol="{proto}",outcome="{outcome}"}} {n}'
                )
        head("time_to_first_audio_seconds", "histogram", "Request to first audio byte.")
        for proto, h in sorted(self.ttfa.items()):
            out.extend(
                h.lines(f"{p}_time_to_first_audio_seconds", f'protocol="{proto}"')
            )
        head("rtf", "histogram", "Synthesis wall time per second of audio.")
        out.extend(self.rtf.lines(f"{p}_rtf", ""))
        head("audio_seconds_total", "counter", "Seconds of audio synthesized.")
        out.append(f"{p}_audio_seconds_total {_num(self.audio_seconds)}")
        head("synthesis_seconds_total", "counter", "Worker time spent synthesizing.")
        out.append(f"{p}_synthesis_seconds_total {_num(self.synthesis_seconds)}")
        head(
            "last_cancel_graph_calls",
            "gauge",
            "Graph calls that ran after the last cancellation.",
        )
        out.append(f"{p}_last_cancel_graph_calls {self.cancel_lag_calls}")
        head("last_cancel_seconds", "gauge", "Cancel to free worker, last time.")
        out.append(f"{p}_last_cancel_seconds {_num(self.cancel_lag_seconds)}")
        head("reloads_total", "counter", "SIGHUP reloads by outcome.")
        for outcome, n in self.reloads.items():
            out.append(f'{p}_reloads_total{{outcome="{outcome}"}} {n}')
        head("last_reload_success", "gauge", "0 if the last reload failed, else 1.")
        out.append(f"{p}_last_reload_success {self.last_reload_success}")
        for name, (help_, read) in self.gauges.items():
            kind = "counter" if name.endswith("_total") else "gauge"
            head(name, kind, help_)
            out.append(f"{p}_{name} {_num(read())}")
        return "\n".join(out) + "\n"


def _num(v: float) -> str:
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("+Inf" if v > 0 else "-Inf")
    return repr(float(v)) if isinstance(v, float) else str(v)
