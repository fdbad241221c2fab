"""``hexvoice serve`` configuration: the schema, as frozen dataclasses.

``config_file.load_config`` reads the YAML file and the command line's
overrides into them once, at start and at each reload, and validates them
completely (types, ranges, socket group; ``check_voices``: every bundle manifest
and its engine registration) before any model loads, so a typo fails in
milliseconds with the field named, not after a minute of NPU set-up.
``daemon.config.reader`` reads the YAML into the dataclasses below (errors:
``<file>: limits.queue_size: expected ..., found ...``).  Example::

    voices:
      - bundle: /usr/share/hexvoice/voices/joe
    default_voice: joe
    engine: {backend: qnn, power: burst}
    listen: {socket_group: hexvoice, tcp_wyoming: "127.0.0.1:10200"}
    limits: {queue_size: 4}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Final

import msgspec

from daemon.config.reader import INTERNAL, ReadError, invalid
from daemon.sdk.graphs import BACKENDS

#: systemd ``RuntimeDirectory=hexvoice`` (systemd/hexvoice.service).
DEFAULT_RUNTIME_DIR: Final = Path("/run/hexvoice")
DEFAULT_SOCKET_MODE: Final = 0o660
#: OpenAI CreateSpeechRequest ``input`` maxLength (docs/clients.md, speech request).
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
#: Longest audio one transcription takes (s): half an hour, a long meeting
#: segment; an engine may declare less (its ``max_input``).
DEFAULT_MAX_AUDIO_S: Final = 1800.0
#: Home Assistant's Wyoming TTS convention (docs/clients.md, Wyoming conventions).
WYOMING_TCP_PORT: Final = 10200
LOG_LEVELS: Final = ("debug", "info", "warning", "error")
#: systemd/hexvoice.service StateDirectory=hexvoice, beside the voice bundles.
DEFAULT_VOICE_DIR: Final = Path("/var/lib/hexvoice/voices")
#: A voice is a few KB (Qwen3-TTS: one x-vector, 4 KB at full size) to a few
#: hundred KB (GPT-SoVITS zero-shot: prompt phones, BERT features, tokens).
DEFAULT_MAX_VOICES: Final = 100
DEFAULT_MAX_VOICE_BYTES: Final = 64 * 1024 * 1024


#: Counts, sizes and durations must be > 0.
Count = Annotated[int, msgspec.Meta(gt=0)]
Seconds = Annotated[float, msgspec.Meta(gt=0)]
#: Largest socket mode we set (rwx for owner, group and others).
MAX_SOCKET_MODE: Final = 0o777
HOST_PORT_EXAMPLE: Final = "HOST:PORT such as 127.0.0.1:10200"


class ConfigError(ReadError):
    """The configuration is invalid; the message names the file and field."""


@dataclass(frozen=True)
class VoiceSource:
    bundle: Path
    """Voice bundle directory (with ``voice.yaml``); a bare string in YAML."""
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
    threads: Count | None = None
    """onnxruntime intra-op threads (cpu backend)."""
    verify_bundles: bool = True
    """Check hashes (and binary I/O on qnn) of every bundle before loading."""

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise invalid("backend", f"one of {list(BACKENDS)}", self.backend)


def _mode(v: int | str) -> int:
    if isinstance(v, str):
        try:
            v = int(v, 8)
        except ValueError:
            raise invalid("socket_mode", "an octal string such as '0660'", v) from None
    if not 0 < v <= MAX_SOCKET_MODE:
        raise invalid("socket_mode", "a mode written as a string, '0660'", v)
    return v


def _host_port(key: str, v: tuple[str, int] | str | None) -> tuple[str, int] | None:
    if not isinstance(v, str):
        return v
    host, sep, port = v.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise invalid(key, HOST_PORT_EXAMPLE, v)
    return host.strip("[]"), int(port)


@dataclass(frozen=True)
class ListenConfig:
    wyoming: Path | None = DEFAULT_RUNTIME_DIR / "wyoming.sock"
    """Wyoming Unix socket; null disables it."""
    http: Path | None = DEFAULT_RUNTIME_DIR / "http.sock"
    """OpenAI-compatible HTTP Unix socket; null disables it."""
    socket_mode: int | str = DEFAULT_SOCKET_MODE
    """Mode of sockets we bind ourselves (systemd-passed ones keep theirs);
    written as an octal string ("0660"), an ``int`` once constructed."""
    socket_group: str | None = None
    """Group that may talk to the service; null keeps our primary group."""
    tcp_wyoming: tuple[str, int] | str | None = None
    """Optional ``host:port`` Wyoming listener (Home Assistant on another host);
    a ``(host, port)`` tuple once constructed."""
    tcp_http: tuple[str, int] | str | None = None
    """Optional ``host:port`` HTTP listener."""

    def __post_init__(self) -> None:
        # Normalized here so that ``replace()`` and direct construction agree.
        set_ = object.__setattr__
        set_(self, "socket_mode", _mode(self.socket_mode))
        set_(self, "tcp_wyoming", _host_port("tcp_wyoming", self.tcp_wyoming))
        set_(self, "tcp_http", _host_port("tcp_http", self.tcp_http))
        if not any((self.wyoming, self.http, self.tcp_wyoming, self.tcp_http)):
            raise invalid("", "at least one listener", "every one disabled", raw=True)


@dataclass(frozen=True)
class LimitsConfig:
    queue_size: Count = DEFAULT_QUEUE_SIZE
    """Requests that may wait behind the running one; more get "busy"."""
    max_input_chars: Count = OPENAI_MAX_INPUT_CHARS
    """Longest text one request may carry (both protocols)."""
    max_audio_s: Seconds = DEFAULT_MAX_AUDIO_S
    """Longest audio one transcription may carry (both protocols); the lower
    of it and the engine's own limit applies, refused when it is reached."""
    request_timeout_s: Seconds = DEFAULT_REQUEST_TIMEOUT_S
    """Queue wait + synthesis; past it the request is cancelled.  A
    transcription session counts it from the last audio it took (a stream of
    any length may run while audio keeps coming, up to ``max_audio_s``)."""
    stall_timeout_s: Seconds = DEFAULT_STALL_TIMEOUT_S
    """Engine step time after which the NPU counts as hung (watchdog)."""
    load_timeout_s: Seconds = DEFAULT_LOAD_TIMEOUT_S
    """Same for loading + warm-up of all bundles."""
    max_event_bytes: Count = DEFAULT_MAX_EVENT_BYTES
    """Largest Wyoming ``data_length`` / ``payload_length`` accepted."""
    max_connections: Count = DEFAULT_MAX_CONNECTIONS
    """Open connections (both protocols); past it an idle one is closed for the
    newcomer, or the newcomer is refused (HTTP 503, Wyoming ``error``)."""
    idle_timeout_s: Seconds = DEFAULT_IDLE_TIMEOUT_S
    """No request in flight for this long: the connection is closed.  HTTP
    counts from connect or the last response until a request header is
    complete (so it also bounds a slow header); Wyoming, between events while
    nothing is queued or playing."""
    header_timeout_s: Seconds = DEFAULT_HEADER_TIMEOUT_S
    """Wyoming: an event header, from its first byte to its end."""
    body_timeout_s: Seconds = DEFAULT_BODY_TIMEOUT_S
    """An announced HTTP body or Wyoming data/payload must arrive within this."""


@dataclass(frozen=True)
class VoiceStoreConfig:
    """``voice_store`` in config.yaml: where cloned voices live, and caps."""

    dir: Path = DEFAULT_VOICE_DIR
    """Directory of the voice files (created if missing; its parent must exist)."""
    max_count: Annotated[int, msgspec.Meta(ge=0)] = DEFAULT_MAX_VOICES
    """Voices it holds at most; 0 turns cloning off."""
    max_bytes: Annotated[int, msgspec.Meta(gt=0)] = DEFAULT_MAX_VOICE_BYTES
    """Bytes of voice files it holds at most."""
    require_consent: bool = False
    """Registering a voice needs a ``consent`` statement from the caller (engines
    whose licence asks for one need it whatever this says)."""


@dataclass(frozen=True)
class ServeConfig:
    voices: Annotated[tuple[VoiceSource, ...], msgspec.Meta(min_length=1)]
    default_voice: str | None = None
    """Voice for requests that name none (and for OpenAI preset names)."""
    engine: EngineConfig = EngineConfig()
    listen: ListenConfig = ListenConfig()
    limits: LimitsConfig = LimitsConfig()
    voice_store: VoiceStoreConfig = VoiceStoreConfig()
    """Cloned voices (``POST /v1/voices``): their directory and caps."""
    log_level: str = "info"
    """One of :data:`LOG_LEVELS`, any case."""
    accept_licenses: tuple[str, ...] = ()
    """Licences the operator accepted (ids, e.g. ``bilibili-model-use``): an
    engine under terms not listed here does not load (daemon/sdk/license.py)."""
    source: Path | None = field(default=None, metadata=INTERNAL)
    """The file this came from (for SIGHUP reload)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "log_level", self.log_level.lower())
        if self.log_level not in LOG_LEVELS:
            raise invalid("log_level", f"one of {list(LOG_LEVELS)}", self.log_level)
