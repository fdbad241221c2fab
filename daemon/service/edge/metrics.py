"""Service metrics, exposed through prometheus_client.

Every ``Metrics`` has its own ``CollectorRegistry`` (one per service, never the
library's process-wide default), so two services in one process -- or the tests'
hosts -- never share a count.  Counters and histograms are updated on the
event-loop thread; values that live elsewhere (queue depth, NPU time) are read
through callbacks when ``/metrics`` is scraped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import Metric

PREFIX: Final = "hexvoice"
#: Time to first audio (s): interactive use cares about 0.1-1 s.
TTFA_BUCKETS: Final = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
#: Real-time factor (synthesis seconds per audio second).
RTF_BUCKETS: Final = (0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 2.0)
PROTOCOLS: Final = ("wyoming", "http")
OUTCOMES: Final = ("ok", "busy", "cancelled", "timeout", "bad_request", "error")
RELOAD_OUTCOMES: Final = ("ok", "failed")


class Metrics:
    """Everything ``/metrics`` reports; one instance (and registry) per service."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        kw: dict[str, Any] = {"namespace": PREFIX, "registry": self.registry}
        self._requests = Counter(
            "requests_total",
            "Synthesis requests by protocol and outcome.",
            ("protocol", "outcome"),
            **kw,
        )
        for proto in PROTOCOLS:  # every series exists from the first scrape
            for outcome in OUTCOMES:
                self._requests.labels(proto, outcome)
        self._ttfa = Histogram(
            "time_to_first_audio_seconds",
            "Request to first audio byte.",
            ("protocol",),
            buckets=TTFA_BUCKETS,
            **kw,
        )
        self._rtf = Histogram(
            "rtf",
            "Synthesis wall time per second of audio.",
            buckets=RTF_BUCKETS,
            **kw,
        )
        self._audio = Counter(
            "audio_seconds_total", "Seconds of audio synthesized.", **kw
        )
        self._synthesis = Counter(
            "synthesis_seconds_total", "Worker time spent synthesizing.", **kw
        )
        self._cancel_calls = Gauge(
            "last_cancel_graph_calls",
            "Graph calls that ran after the last cancellation.",
            **kw,
        )
        self._cancel_s = Gauge(
            "last_cancel_seconds", "Cancel to free worker, last time.", **kw
        )
        self._reloads = Counter(
            "reloads_total", "SIGHUP reloads by outcome.", ("outcome",), **kw
        )
        for outcome in RELOAD_OUTCOMES:
            self._reloads.labels(outcome)
        self._reload_ok = Gauge(
            "last_reload_success", "0 if the last reload failed, else 1.", **kw
        )
        # 1 until a reload fails (the start-up load succeeded, or we would not run)
        self._reload_ok.set(1)
        self._scraped = _WithoutCreated(self.registry)

    def request(self, protocol: str, outcome: str) -> None:
        self._requests.labels(protocol, outcome).inc()

    def first_audio(self, protocol: str, seconds: float) -> None:
        self._ttfa.labels(protocol).observe(seconds)

    def synthesized(self, audio_s: float, wall_s: float) -> None:
        self._audio.inc(audio_s)
        self._synthesis.inc(wall_s)
        if audio_s > 0:
            self._rtf.observe(wall_s / audio_s)

    def cancelled_after(self, graph_calls: int, seconds: float) -> None:
        """How much NPU work ran between a cancel and the worker being free."""
        self._cancel_calls.set(graph_calls)
        self._cancel_s.set(seconds)

    def reloaded(self, ok: bool) -> None:
        self._reloads.labels("ok" if ok else "failed").inc()
        self._reload_ok.set(int(ok))

    def gauge(self, name: str, help_: str, read: Callable[[], float]) -> None:
        """Report ``read()`` at every scrape; a ``*_total`` name is a counter."""
        if name.endswith("_total"):
            self.registry.register(_ReadCounter(f"{PREFIX}_{name}", help_, read))
        else:
            g = Gauge(name, help_, namespace=PREFIX, registry=self.registry)
            g.set_function(read)

    def served(self) -> float:
        """Requests answered in full, over every protocol."""
        return _sum(self._requests, outcome="ok")

    @property
    def synthesis_seconds(self) -> float:
        return _sum(self._synthesis)

    def exposition(self, accept: str | None) -> tuple[bytes, str]:
        """This service's registry as (body, content type), in the format the
        scraper's Accept header asks for (prometheus_client's negotiation: text
        0.0.4 unless it asks for OpenMetrics or text 1.0.0)."""
        encode, content_type = choose_encoder(accept or "")
        return encode(self._scraped), content_type


class _ReadCounter:
    """A counter kept elsewhere (graph calls, NPU time), read when scraped."""

    def __init__(self, name: str, help_: str, read: Callable[[], float]) -> None:
        self._name, self._help, self._read = name, help_, read

    def describe(self) -> list[Metric]:  # names for the registry, no read
        return [CounterMetricFamily(self._name, self._help)]

    def collect(self) -> list[Metric]:
        return [CounterMetricFamily(self._name, self._help, value=self._read())]


class _WithoutCreated:
    """A registry as scraped, minus the ``*_created`` timestamps counters and
    histograms carry: nothing here reads them, and prometheus_client can only
    turn them off process-wide (``disable_created_metrics``), which would reach
    into every other registry in the process."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry

    def collect(self) -> Iterable[Metric]:
        for family in self._registry.collect():  # fresh families on every call
            family.samples = [
                s for s in family.samples if not s.name.endswith("_created")
            ]
            yield family


def _sum(metric: Counter, **labels: str) -> float:
    """A counter's value over the children matching ``labels``."""
    return sum(
        s.value
        for family in metric.collect()
        for s in family.samples
        if s.name.endswith("_total") and labels.items() <= s.labels.items()
    )
