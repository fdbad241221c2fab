"""What the reload tests share: daemons with a watchdog, config edits, SIGHUP and
the requests and /health reads they check with."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import yaml

from tests.daemon.conftest import Daemon, ServiceVoice, start_daemon

#: sd_notify watchdog period given to the daemon; it pings every half of it.
WATCHDOG_USEC = 400_000
PING_S = WATCHDOG_USEC / 2e6
RELOAD_TIMEOUT_S = 30.0
SPEECH = "/v1/audio/speech"


def daemons(tmp_path: Path) -> Iterator[Callable[..., Daemon]]:
    """A ``spawn`` fixture's body: daemons on any voice, with a watchdog;
    stopped and checked afterwards."""
    started: list[Daemon] = []

    def make(voice: ServiceVoice, **sections: Any) -> Daemon:
        d = start_daemon(
            tmp_path / f"d{len(started)}",
            voice,
            extra_env={"WATCHDOG_USEC": str(WATCHDOG_USEC)},
            **sections,
        )
        started.append(d)
        return d

    yield make
    for d in started:
        assert d.stop() == 0, d.stderr()
        assert "Traceback" not in d.stderr(), d.stderr()


def point_config_at(d: Daemon, *voices: ServiceVoice) -> None:
    cfg = yaml.safe_load(d.config.read_text())
    cfg["voices"] = [{"bundle": str(v.bundle)} for v in voices]
    d.config.write_text(yaml.safe_dump(cfg))


def set_params(bundle: Path, **params: Any) -> None:
    """A new version of a bundle in place: same path, changed manifest."""
    path = bundle / "voice.yaml"
    manifest = yaml.safe_load(path.read_text())
    manifest["params"].update(params)
    path.write_text(yaml.safe_dump(manifest))


def spawn_many(spawn: Callable[..., Daemon], *voices: ServiceVoice | Path) -> Daemon:
    """A daemon serving every bundle given (a ServiceVoice or a bundle path)."""
    paths = [v if isinstance(v, Path) else v.bundle for v in voices]
    first = next(v for v in voices if isinstance(v, ServiceVoice))
    return spawn(first, voices=[{"bundle": str(p)} for p in paths])


def changes(**kinds: list[str]) -> dict[str, list[str]]:
    """/health's "changes" of a reload: every kind, empty unless given."""
    return {k: kinds.get(k, []) for k in ("added", "reloaded", "kept", "dropped",
                                          "failed")}  # fmt: skip


def sighup(d: Daemon) -> list[str]:
    """Reload and wait for its end (READY=1); the STATUS= lines it sent."""
    mark = len(d.notify.messages)
    d.proc.send_signal(signal.SIGHUP)
    d.notify.wait_for("RELOADING=1", RELOAD_TIMEOUT_S, mark)
    d.notify.wait_for("READY=1", RELOAD_TIMEOUT_S, mark)
    return [
        ln[len("STATUS=") :]
        for _, m in d.notify.messages[mark:]
        for ln in m.split("\n")
        if ln.startswith("STATUS=")
    ]


def speak(d: Daemon, text: str, voice: str = "tone") -> httpx.Response:
    body = {"model": "tts-1", "input": text, "voice": voice, "response_format": "pcm"}
    with d.http_client() as c:
        return c.post(SPEECH, json=body)


def health(d: Daemon) -> httpx.Response:
    with d.http_client() as c:
        return c.get("/health")
