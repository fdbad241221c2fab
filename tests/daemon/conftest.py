"""Fixtures for the service tests: the test voice, a daemon subprocess, clients.

``test_voice`` is the one place that decides which engine the service tests
run; swap it for the Piper voice bundle once that engine is registered.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from scripts.common import bundling
from tests.engine_site import TONE_ENGINE, engine_site

ROOT = Path(__file__).resolve().parents[2]
#: Words per test request are cheap (a few ms each on the simulator); these
#: sizes make a request long enough to observe queueing and cancellation.
LONG_WORDS = 3000
START_TIMEOUT_S = 60.0
#: Voices, and graph calls per word (the warm-up speaks one), that make a load
#: take seconds on the simulator in many steps, each a small part of the whole.
SLOW_VOICES = 16
SLOW_WARMUP_CALLS = 2000


@dataclass(frozen=True)
class ServiceVoice:
    bundle: Path
    name: str
    sample_rate: int
    env: dict[str, str]  # what the daemon's environment needs to find the engine


@pytest.fixture(scope="session")
def test_voice(bins, onnx_dir, tmp_path_factory) -> ServiceVoice:
    """The voice every service test uses (tests/daemon/tone_engine.py)."""
    root = tmp_path_factory.mktemp("tone_voice")
    graphs = {
        "mm": bundling.add_graph(
            root, "mm", bins["matmul_tanh"].bin_path, onnx_dir / "matmul_tanh.onnx"
        )
    }
    bundling.finish(
        root,
        engine=TONE_ENGINE,
        name="tone",
        sample_rate=16000,
        languages=("en_US",),
        graphs=graphs,
        params={"calls_per_word": 4},
    )
    return ServiceVoice(
        root, "tone", 16000, {"PYTHONPATH": _engine_path(tmp_path_factory)}
    )


def _engine_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    """PYTHONPATH for a child process that must find the tone engine."""
    site = engine_site(tmp_path_factory.mktemp("engine_site"))
    return os.pathsep.join([str(site), str(ROOT)])


class NotifySink:
    """A real NOTIFY_SOCKET: collects the daemon's sd_notify datagrams."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.messages: list[tuple[float, str]] = []
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._sock.bind(str(path))
        self._sock.settimeout(0.2)
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._done.is_set():
            try:
                data = self._sock.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            self.messages.append((time.monotonic(), data.decode()))

    def lines(self) -> list[str]:
        return [ln for _, m in list(self.messages) for ln in m.split("\n")]

    def wait_for(
        self, line: str, timeout: float = START_TIMEOUT_S, after: int = 0
    ) -> float:
        """Time at which ``line`` arrived (among messages from index ``after``)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for t, m in list(self.messages)[after:]:
                if line in m.split("\n"):
                    return t
            time.sleep(0.02)
        raise AssertionError(f"no {line!r} within {timeout} s; got {self.lines()}")

    def close(self) -> None:
        self._done.set()
        self._sock.close()


@dataclass
class Daemon:
    """``hexvoice serve`` as a subprocess with real sockets."""

    dir: Path
    proc: subprocess.Popen
    notify: NotifySink
    log: Path
    config: Path
    wyoming: Path = field(init=False)
    http: Path = field(init=False)

    def __post_init__(self) -> None:
        self.wyoming = self.dir / "wyoming.sock"
        self.http = self.dir / "http.sock"

    @property
    def uri(self) -> str:
        return f"unix://{self.wyoming}"

    def stderr(self) -> str:
        return self.log.read_text(errors="replace")

    def http_client(self, timeout: float = 30.0) -> httpx.Client:
        return httpx.Client(
            transport=httpx.HTTPTransport(uds=str(self.http)),
            base_url="http://hexvoice",
            timeout=timeout,
        )

    def metrics(self) -> dict[str, float]:
        """One scrape, parsed by prometheus_client: ``name{k="v",...}`` (labels
        sorted by name: the text's own order varies with the library version)."""
        with self.http_client() as c:
            text = c.get("/metrics").text
        return {
            s.name + _labels(s.labels): s.value
            for family in text_string_to_metric_families(text)
            for s in family.samples
        }

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError(
                f"daemon ignored signal {sig}:\n{self.stderr()}"
            ) from None
        finally:
            self.notify.close()


def _labels(labels: dict[str, str]) -> str:
    inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    return f"{{{inner}}}" if inner else ""


def write_config(
    path: Path, voice: ServiceVoice, sock_dir: Path, **sections: Any
) -> Path:
    cfg: dict[str, Any] = {
        "voices": [{"bundle": str(voice.bundle)}],
        "listen": {
            "wyoming": str(sock_dir / "wyoming.sock"),
            "http": str(sock_dir / "http.sock"),
        },
        "engine": {"backend": "qnn"},
    }
    for key, value in sections.items():
        if isinstance(value, dict):
            cfg.setdefault(key, {}).update(value)
        else:
            cfg[key] = value
    path.write_text(yaml.safe_dump(cfg))
    return path


def start_daemon(
    tmp: Path,
    voice: ServiceVoice,
    *,
    extra_env: dict[str, str] | None = None,
    activate: str | None = None,
    wait_ready: bool = True,
    wrap: Sequence[str] = (),
    **sections: Any,
) -> Daemon:
    """Start ``hexvoice serve``; ``activate="a:b"`` runs it under
    ``systemd-socket-activate`` with those fd names (started on first connect);
    ``wrap``: a command it runs under (e.g. ``setpriv ...``)."""
    tmp.mkdir(parents=True, exist_ok=True)
    sock_dir = tmp / "run"
    config = write_config(tmp / "config.yaml", voice, sock_dir, **sections)
    notify = NotifySink(tmp / "notify.sock")
    child_env = {**voice.env, "NOTIFY_SOCKET": str(notify.path), **(extra_env or {})}
    env = {**os.environ, **child_env}
    log = tmp / "daemon.log"
    argv = [*wrap, sys.executable, "-m", "daemon.cli", "serve", "--config", str(config)]
    if activate is not None:
        sock_dir.mkdir(exist_ok=True)
        prefix = ["systemd-socket-activate", f"--fdname={activate}"]
        for name in ("wyoming.sock", "http.sock"):
            prefix += ["-l", str(sock_dir / name)]
        for key, value in child_env.items():  # it passes only what -E names
            prefix += ["-E", f"{key}={value}"]
        argv = prefix + argv
        wait_ready = False
    proc = subprocess.Popen(
        argv,
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(log, "wb"),  # noqa: SIM115 - the child owns it
    )
    d = Daemon(sock_dir, proc, notify, log, config)
    if wait_ready:
        try:
            notify.wait_for("READY=1")
        except AssertionError:
            d.stop(signal.SIGKILL)
            raise AssertionError(f"daemon did not get ready:\n{d.stderr()}") from None
    return d


def serving(tmp: Path, voice: ServiceVoice, **sections: Any) -> Iterator[Daemon]:
    """A module fixture's body: one daemon, stopped cleanly and traceback-free."""
    d = start_daemon(tmp, voice, **sections)
    yield d
    assert d.stop() == 0, d.stderr()
    assert "Traceback" not in d.stderr(), d.stderr()


@pytest.fixture(scope="module")
def daemon_factory(
    tmp_path_factory: pytest.TempPathFactory, test_voice: ServiceVoice
) -> Iterator[Callable[..., Daemon]]:
    started: list[Daemon] = []

    def make(name: str = "d", **kw: Any) -> Daemon:
        # Short paths: AF_UNIX addresses are limited to 108 bytes.
        d = start_daemon(tmp_path_factory.mktemp(name), test_voice, **kw)
        started.append(d)
        return d

    yield make
    for d in started:
        if d.proc.poll() is None:
            d.stop()
    crashed = [d.stderr() for d in started if "Traceback" in d.stderr()]
    if crashed:
        pytest.fail("a daemon logged a traceback:\n" + crashed[0])


@pytest.fixture(scope="session")
def speech_service(
    pytestconfig: pytest.Config,
    tmp_path_factory: pytest.TempPathFactory,
    tiny_asr_bundle: Path,
) -> Iterator[Daemon]:
    """One service for the ASR round trips (Wyoming and HTTP): the Piper demo
    voice and the tiny Qwen3-ASR bundle, CPU backend (tests/daemon/asr_service.py)."""
    from tests.daemon.asr_service import speech_daemon
    from tests.piper_bundles import CPU_OPTIONS, bundle_dir

    joe = bundle_dir(pytestconfig, CPU_OPTIONS)
    yield from speech_daemon(tmp_path_factory.mktemp("speech"), joe, tiny_asr_bundle)


def words(n: int, stem: str = "word") -> str:
    return " ".join(f"{stem}{i}" for i in range(n))


def copy_voice(
    voice: ServiceVoice, dest: Path, name: str | None = None, **params: Any
) -> ServiceVoice:
    """A copy of ``voice``'s bundle at ``dest``, renamed and with params changed."""
    shutil.copytree(voice.bundle, dest)
    manifest = yaml.safe_load((dest / "voice.yaml").read_text())
    manifest["name"] = name or manifest["name"]
    manifest["params"].update(params)
    (dest / "voice.yaml").write_text(yaml.safe_dump(manifest))
    return replace(voice, bundle=dest, name=manifest["name"])


def flip_byte(bundle: Path, graph: str = "mm") -> Path:
    """Flip one byte in the middle of a binary that voice.yaml hashes."""
    manifest = yaml.safe_load((bundle / "voice.yaml").read_text())
    path = bundle / manifest["graphs"][graph]["file"]
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    return path
