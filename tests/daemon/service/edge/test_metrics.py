"""daemon/service/edge/metrics.py: one prometheus_client registry per service, an
exposition the library's own parser reads, nothing in the process-wide default
registry."""

from __future__ import annotations

import prometheus_client
import pytest
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as openmetrics_families,
)
from prometheus_client.parser import text_string_to_metric_families

from daemon.service.edge.metrics import OUTCOMES, PROTOCOLS, RELOAD_OUTCOMES, Metrics


def _scrape(m: Metrics, accept: str | None = None) -> dict[str, object]:
    body, _ = m.exposition(accept)
    return {f.name: f for f in text_string_to_metric_families(body.decode())}


def _value(families: dict, family: str, sample: str, **labels: str) -> float:
    hits = [
        s.value
        for s in families[family].samples
        if s.name == sample and s.labels == labels
    ]
    assert len(hits) == 1, (sample, labels, families[family].samples)
    return hits[0]


def _used(m: Metrics) -> Metrics:
    m.request("http", "ok")
    m.request("wyoming", "busy")
    m.first_audio("http", 0.3)
    m.synthesized(audio_s=2.0, wall_s=0.5)
    m.cancelled_after(graph_calls=1, seconds=0.02)
    m.reloaded(False)
    m.gauge("queue_depth", "Requests admitted, not finished.", lambda: 3)
    m.gauge("graph_calls_total", "Graph calls executed.", lambda: 7)
    return m


def test_exposition_parses_with_prometheus_clients_parser():
    m = _used(Metrics())
    body, content_type = m.exposition(None)
    assert content_type.startswith("text/plain; version=0.0.4")
    f = _scrape(m)
    for proto in PROTOCOLS:  # every request series exists before its first count
        for outcome in OUTCOMES:
            want = 1 if (proto, outcome) in {("http", "ok"), ("wyoming", "busy")} else 0
            got = _value(
                f,
                "hexvoice_requests",
                "hexvoice_requests_total",
                protocol=proto,
                outcome=outcome,
            )
            assert got == want, (proto, outcome)
    assert f["hexvoice_requests"].type == "counter"
    ttfa = "hexvoice_time_to_first_audio_seconds"
    assert f[ttfa].type == "histogram"  # 0.3 s: above the 0.25 bucket, in 0.5
    assert _value(f, ttfa, ttfa + "_bucket", protocol="http", le="0.25") == 0
    assert _value(f, ttfa, ttfa + "_bucket", protocol="http", le="0.5") == 1
    assert _value(f, "hexvoice_rtf", "hexvoice_rtf_sum") == 0.25
    assert _value(f, "hexvoice_rtf", "hexvoice_rtf_count") == 1
    assert _value(f, "hexvoice_audio_seconds", "hexvoice_audio_seconds_total") == 2
    assert (
        _value(f, "hexvoice_synthesis_seconds", "hexvoice_synthesis_seconds_total")
        == 0.5
    )
    one = "hexvoice_last_cancel_graph_calls"
    assert f[one].type == "gauge" and _value(f, one, one) == 1
    for outcome in RELOAD_OUTCOMES:
        got = _value(f, "hexvoice_reloads", "hexvoice_reloads_total", outcome=outcome)
        assert got == (outcome == "failed")
    ok = "hexvoice_last_reload_success"
    assert _value(f, ok, ok) == 0
    assert _value(f, "hexvoice_queue_depth", "hexvoice_queue_depth") == 3
    # a read-at-scrape total is still a counter, not a gauge named *_total
    assert f["hexvoice_graph_calls"].type == "counter"
    assert _value(f, "hexvoice_graph_calls", "hexvoice_graph_calls_total") == 7
    assert b"_created" not in body  # creation timestamps are not exposed


def test_two_services_share_no_state():
    a, b = _used(Metrics()), Metrics()
    # the same callback name in both: a shared registry would refuse the second
    b.gauge("queue_depth", "Requests admitted, not finished.", lambda: 0)
    fa, fb = _scrape(a), _scrape(b)
    req = ("hexvoice_requests", "hexvoice_requests_total")
    assert _value(fa, *req, protocol="http", outcome="ok") == 1
    assert _value(fb, *req, protocol="http", outcome="ok") == 0
    assert _value(fb, "hexvoice_queue_depth", "hexvoice_queue_depth") == 0
    assert "hexvoice_graph_calls" not in fb
    assert "hexvoice_time_to_first_audio_seconds" in fa
    assert not fb["hexvoice_time_to_first_audio_seconds"].samples
    assert a.served() == 1 and b.served() == 0
    assert a.synthesis_seconds == 0.5 and b.synthesis_seconds == 0
    # and nothing lands in the library's process-wide default registry
    default = prometheus_client.REGISTRY
    assert (
        default.get_sample_value(
            "hexvoice_requests_total", {"protocol": "http", "outcome": "ok"}
        )
        is None
    )


def test_one_name_registered_twice_in_one_service_is_refused():
    m = Metrics()
    m.gauge("queue_depth", "Requests admitted, not finished.", lambda: 1)
    with pytest.raises(ValueError, match="Duplicated timeseries"):
        m.gauge("queue_depth", "again", lambda: 2)
    assert _value(_scrape(m), "hexvoice_queue_depth", "hexvoice_queue_depth") == 1


def test_an_openmetrics_scraper_gets_openmetrics():
    body, content_type = _used(Metrics()).exposition(
        "application/openmetrics-text; version=1.0.0,text/plain;q=0.5"
    )
    assert content_type.startswith("application/openmetrics-text")
    families = {f.name: f for f in openmetrics_families(body.decode())}
    assert families["hexvoice_requests"].type == "counter"
    assert b"_created" not in body
