"""``hexvoice serve`` configuration: YAML file + CLI overrides → frozen dataclasses.

Loaded once in ``serve.main`` and validated completely (types, ranges, socket
group, every bundle manifest and its engine registration) before any model loads,
so a typo fails in milliseconds with the field named, not after a minute of NPU
set-up.  Example::

    voices:
      - bundle: /usr/share/hexvoice/voices/joe
    default_voice: joe
    engine: {backend: qnn, power: burst}
    listen: {socket_group: hexvoice, tcp_wyoming: "127.0.0.1:10200"}
    limits: {queue_size: 4}
"""

from __future__ import annotations

import grp
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Final

import yaml

from daemon.engine.bundle import Bundle, BundleError
from daemon.engine.fields import expected
from daemon.engine.graphs import BACKENDS
from daemon.engine.registry import engine_class

DEFAULT_CONFIG_PATH: Final = Path("/etc/hexvoice/config.yaml")
#: systemd ``RuntimeDirectory=hexvoice`` (systemd/hexvoice.service).
DEFAULT_RUNTIME_DIR: Final = Path("/run/hexvoice")
DEFAULT_SOCKET_MODE: Final = 0o660
#: OpenAI CreateSpeechRequest ``input`` maxLength (ecosystem.md §2.1).
OPENAI_MAX_INPUT_CHARS: Final = 4096
DEFAULT_QUEUE_SIZE: Final = 4
DEFAULT_REQUEST_TIMEOUT_S: Final = 120.0
#: An engine step (graph call) running longer than this counts as a hung NPU: the
#: watchdog stops pinging and systemd restarts the service.
DEFAULT_STALL_TIMEOUT_S: Final = 30.0
#: Loading/warming bundles may legitimately take minutes on a cold board.
DEFAULT_LOAD_TIMEOUT_S: Final = 600.0
#: Largest Wyoming data block or payload we accept; TTS clients send text only.
DEFAULT_MAX_EVENT_BYTES: Final = 1 << 20
#: Open connections, both protocols together.  A voice service has a handful of
#: clients (Home Assistant opens one per request); each connection costs a
#: descriptor, which systemd/hexvoice.service's LimitNOFILE= is sized for.
DEFAULT_MAX_CONNECTIONS: Final = 128
#: A connection with nothing in flight is closed after this long; clients
#: reconnect per request anyway (aiohttp's own keep-alive default is 75 s).
DEFAULT_IDLE_TIMEOUT_S: Final = 60.0
#: A started Wyoming event header must end (newline) within this.
DEFAULT_HEADER_TIMEOUT_S: Final = 10.0
#: An announced body (HTTP Content-Length, Wyoming data/payload) must arrive in
#: this: 256 KiB at well under 10 KiB/s.
DEFAULT_BODY_TIMEOUT_S: Final = 30.0
#: Home Assistant's Wyoming TTS convention (ecosystem.md §0).
WYOMING_TCP_PORT: Final = 10200
LOG_LEVELS: Final = ("debug", "info", "warning", "error")


class ConfigError(ValueError):
    """The configuration is invalid; the message names the file and field."""


@dataclass(frozen=True)
class VoiceSource:
    bundle: Path
    """Voice bundle directory (with ``voice.yaml``)."""
    engine: str | None = None
    """Engine entry point; default: the manifest's ``engine``."""


@dataclass(frozen=True)
class EngineConfig:
    backend: str = "qnn"
    """``qnn`` (board or HTP simulator) or ``cpu`` (onnxruntime, development)."""
    qnn_lib_dir: Path | None = None
    """QNN libraries; default: qnnrt's search order."""
    power: str | None = None
    """qnnrt power profile, e.g. ``burst``."""
    threads: int | None = None
    """onnxruntime intra-op threads (cpu backend)."""
    verify_bundles: bool = True
    """Check hashes (and binary I/O on qnn) of every bundle before loading."""


@dataclass(frozen=True)
class ListenConfig:
    wyoming: Path | None = DEFAULT_RUNTIME_DIR / "wyoming.sock"
    """Wyoming Unix socket; null disables it."""
    http: Path | None = DEFAULT_RUNTIME_DIR / "http.sock"
    """OpenAI-compatible HTTP Unix socket; null disables it."""
    socket_mode: int = DEFAULT_SOCKET_MODE
    """Mode of sockets we bind ourselves (systemd-passed ones keep theirs)."""
    socket_group: str | None = None
    """Group that may talk to the service; null keeps our primary group."""
    tcp_wyoming: tuple[str, int] | None = None
    """Optional ``host:port`` Wyoming listener (Home Assistant on another host)."""
    tcp_http: tuple[str, int] | None = None
    """Optional ``host:port`` HTTP listener."""


@dataclass(frozen=True)
class LimitsConfig:
    queue_size: int = DEFAULT_QUEUE_SIZE
    """Requests that may wait behind the running one; more get "busy"."""
    max_input_chars: int = OPENAI_MAX_INPUT_CHARS
    """Longest text one request may carry (both protocols)."""
    request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S
    """Queue wait + synthesis; past it the request is cancelled."""
    stall_timeout_s: float = DEFAULT_STALL_TIMEOUT_S
    """Engine step time after which the NPU counts as hung (watchdog)."""
    load_timeout_s: float = DEFAULT_LOAD_TIMEOUT_S
    """Same for loading + warm-up of all bundles."""
    max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES
    """Largest Wyoming ``data_length`` / ``payload_length`` accepted."""
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    """Open connections (both protocols); past it an idle one is closed for the
    newcomer, or the newcomer is refused (HTTP 503, Wyoming ``error``)."""
    idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S
    """No request in flight for this long: the connection is closed.  HTTP
    counts from connect or the last response until a request header is
    complete (so it also bounds a slow header); Wyoming, between events while
    nothing is queued or playing."""
    header_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S
    """Wyoming: an event header, from its first byte to its end."""
    body_timeout_s: float = DEFAULT_BODY_TIMEOUT_S
    """An announced HTTP body or Wyoming data/payload must arrive within this."""


@dataclass(frozen=True)
class ServeConfig:
    voices: tuple[VoiceSource, ...]
    default_voice: str | None = None
    """Voice for requests that name none (and for OpenAI preset names)."""
    engine: EngineConfig = EngineConfig()
    listen: ListenConfig = ListenConfig()
    limits: LimitsConfig = LimitsConfig()
    log_level: str = "info"
    source: Path | None = None
    """The file this came from (for SIGHUP reload)."""


def load_config(
    path: str | Path | None = None, overrides: Mapping[str, Any] | None = None
) -> ServeConfig:
    """Read ``path`` (YAML), apply dotted-key ``overrides``, validate everything.

    ``path=None`` reads the default file if it exists; overrides alone may then
    describe the whole service (``--bundle``...).
    """
    data: dict[str, Any] = {}
    where = "command line"
    src: Path | None = None
    if path is not None or DEFAULT_CONFIG_PATH.is_file():
        src = Path(path) if path is not None else DEFAULT_CONFIG_PATH
        where = str(src)
        try:
            loaded = yaml.safe_load(src.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"{src}: cannot read: {exc.strerror}") from exc
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{src}: invalid YAML: {exc}") from exc
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError(f"{src}: expected a mapping at the top level")
        data = _relative_to(loaded or {}, src.parent.resolve())
    for key, value in (overrides or {}).items():
        _set_dotted(data, key, value)
    cfg = _parse(data, where)
    return replace(cfg, source=src.resolve() if src else None)


def check_voices(cfg: ServeConfig) -> list[Bundle]:
    """Read every manifest and resolve its engine (no model is loaded)."""
    bundles = []
    where = cfg.source or "command line"
    for i, v in enumerate(cfg.voices):
        try:
            b = Bundle.load(v.bundle)
            engine_class(v.engine or b.engine)
        except (BundleError, LookupError, ImportError) as exc:
            raise ConfigError(f"{where}: voices[{i}]: {exc}") from exc
        bundles.append(b)
    return bundles


def _parse(data: Mapping[str, Any], where: str) -> ServeConfig:
    r = _Fields(data, where, ServeConfig)
    raw_voices = r.get("voices", list)
    if not raw_voices:
        raise ConfigError(f"{where}: voices: at least one voice bundle is required")
    voices = []
    for i, v in enumerate(raw_voices):
        if isinstance(v, str):
            v = {"bundle": v}
        vr = _Fields(v, f"{where}: voices[{i}]", VoiceSource)
        voices.append(VoiceSource(Path(vr.get("bundle", str)), vr.opt("engine", str)))
    e = _Fields(r.opt("engine", dict) or {}, f"{where}: engine", EngineConfig)
    backend = e.opt("backend", str) or "qnn"
    if backend not in BACKENDS:
        raise ConfigError(f"{where}: engine.backend {backend!r}: one of {BACKENDS}")
    lib = e.opt("qnn_lib_dir", str)
    engine = EngineConfig(
        backend=backend,
        qnn_lib_dir=Path(lib) if lib else None,
        power=e.opt("power", str),
        threads=e.positive("threads", int, None),
        verify_bundles=e.opt("verify_bundles", bool, True),
    )
    ln = _Fields(r.opt("listen", dict) or {}, f"{where}: listen", ListenConfig)
    listen = ListenConfig(
        wyoming=ln.socket_path("wyoming"),
        http=ln.socket_path("http"),
        socket_mode=_mode(ln.opt("socket_mode", (int, str)), ln.where),
        socket_group=_group(ln.opt("socket_group", str), ln.where),
        tcp_wyoming=_host_port(ln.opt("tcp_wyoming", str), ln.where + ".tcp_wyoming"),
        tcp_http=_host_port(ln.opt("tcp_http", str), ln.where + ".tcp_http"),
    )
    if not any((listen.wyoming, listen.http, listen.tcp_wyoming, listen.tcp_http)):
        raise ConfigError(f"{where}: listen: every listener is disabled")
    lm = _Fields(r.opt("limits", dict) or {}, f"{where}: limits", LimitsConfig)
    d = LimitsConfig()
    limits = LimitsConfig(
        queue_size=lm.positive("queue_size", int, d.queue_size),
        max_input_chars=lm.positive("max_input_chars", int, d.max_input_chars),
        request_timeout_s=lm.positive("request_timeout_s", float, d.request_timeout_s),
        stall_timeout_s=lm.positive("stall_timeout_s", float, d.stall_timeout_s),
        load_timeout_s=lm.positive("load_timeout_s", float, d.load_timeout_s),
        max_event_bytes=lm.positive("max_event_bytes", int, d.max_event_bytes),
        max_connections=lm.positive("max_connections", int, d.max_connections),
        idle_timeout_s=lm.positive("idle_timeout_s", float, d.idle_timeout_s),
        header_timeout_s=lm.positive("header_timeout_s", float, d.header_timeout_s),
        body_timeout_s=lm.positive("body_timeout_s", float, d.body_timeout_s),
    )
    level = (r.opt("log_level", str) or "info").lower()
    if level not in LOG_LEVELS:
        raise ConfigError(f"{where}: log_level {level!r}: one of {LOG_LEVELS}")
    return ServeConfig(
        voices=tuple(voices),
        default_voice=r.opt("default_voice", str),
        engine=engine,
        listen=listen,
        limits=limits,
        log_level=level,
    )


class _Fields:
    """Typed access to one mapping; unknown keys are errors (typos fail loudly)."""

    def __init__(self, data: Any, where: str, cls: type) -> None:
        if not isinstance(data, Mapping):
            raise ConfigError(f"{where}: expected a mapping, got {type(data).__name__}")
        known = {f.name for f in fields(cls)} - {"source"}
        unknown = sorted(set(map(str, data)) - known)
        if unknown:
            raise ConfigError(
                f"{where}: unknown key(s) {unknown}; known: {sorted(known)}"
            )
        self.data, self.where = data, where

    def get(self, key: str, typ: Any) -> Any:
        if self.data.get(key) is None:
            raise ConfigError(f"{self.where}: missing {key!r}")
        return self.opt(key, typ)

    def opt(self, key: str, typ: Any, default: Any = None) -> Any:
        v = self.data.get(key)
        if v is None:
            return default
        if typ is float and isinstance(v, int) and not isinstance(v, bool):
            v = float(v)
        types = typ if isinstance(typ, tuple) else (typ,)
        if not isinstance(v, types) or (isinstance(v, bool) and bool not in types):
            raise ConfigError(
                f"{self.where}: {key} must be {expected(types)}, "
                f"got {type(v).__name__} {v!r}"
            )
        return v

    def positive(self, key: str, typ: type, default: Any) -> Any:
        v = self.opt(key, typ, default)
        if v is not None and not v > 0:
            raise ConfigError(f"{self.where}: {key} must be > 0, got {v!r}")
        return v

    def socket_path(self, key: str) -> Path | None:
        if key in self.data and self.data[key] is None:
            return None  # explicitly disabled
        v = self.opt(key, str)
        if v is None:
            return getattr(ListenConfig(), key)  # type: ignore[no-any-return]
        return Path(v).absolute()


def _mode(v: int | str | None, where: str) -> int:
    if v is None:
        return DEFAULT_SOCKET_MODE
    if isinstance(v, str):
        try:
            v = int(v, 8)
        except ValueError:
            raise ConfigError(f"{where}: socket_mode {v!r} is not octal") from None
    if not 0 < v <= 0o777:
        raise ConfigError(f"{where}: socket_mode {v!r}: write it as a string, '0660'")
    return v


def _group(name: str | None, where: str) -> str | None:
    if name is not None:
        try:
            grp.getgrnam(name)
        except KeyError:
            raise ConfigError(
                f"{where}: socket_group {name!r} does not exist"
            ) from None
    return name


def _host_port(v: str | None, where: str) -> tuple[str, int] | None:
    if v is None:
        return None
    host, sep, port = v.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"{where}: {v!r} is not HOST:PORT (e.g. 127.0.0.1:10200)")
    return host.strip("[]"), int(port)


def _relative_to(data: dict[str, Any], base: Path) -> dict[str, Any]:
    """Resolve the file's relative paths against its own directory."""
    out = dict(data)
    voices = out.get("voices")
    if isinstance(voices, list):
        out["voices"] = [
            _rebase(v, base, "bundle") if isinstance(v, dict) else _join(v, base)
            for v in voices
        ]
    for section, key in (
        ("listen", "wyoming"),
        ("listen", "http"),
        ("engine", "qnn_lib_dir"),
    ):
        if isinstance(out.get(section), dict):
            out[section] = _rebase(out[section], base, key)
    return out


def _rebase(d: dict[str, Any], base: Path, key: str) -> dict[str, Any]:
    return {**d, key: _join(d[key], base)} if key in d else d


def _join(v: Any, base: Path) -> Any:
    return str(base / v) if isinstance(v, str) and not Path(v).is_absolute() else v


def _set_dotted(data: dict[str, Any], key: str, value: Any) -> None:
    *parents, last = key.split(".")
    node = data
    for p in parents:
        child = node.get(p)
        if not isinstance(child, dict):
            child = node[p] = {}
        node = child
    node[last] = value
