"""Configuration: YAML + CLI overrides → frozen dataclasses, with clear errors."""

from __future__ import annotations

import dataclasses
import grp
import os
from pathlib import Path

import pytest

from daemon.cli.serve.command import _overrides, _parser
from daemon.service.config import DEFAULT_RUNTIME_DIR, ConfigError, ServeConfig
from daemon.service.config_file import check_voices, load_config


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "config.yaml"
    p.write_text(text)
    return p


def test_defaults_serve_from_run_hexvoice(tmp_path):
    cfg = load_config(_write(tmp_path, "voices: [/v/joe]\n"))
    assert cfg.listen.wyoming == DEFAULT_RUNTIME_DIR / "wyoming.sock"
    assert cfg.listen.http == DEFAULT_RUNTIME_DIR / "http.sock"
    assert cfg.listen.socket_mode == 0o660
    assert cfg.listen.tcp_wyoming is None and cfg.listen.tcp_http is None
    assert cfg.limits.queue_size == 4 and cfg.limits.max_input_chars == 4096
    assert cfg.engine.backend == "qnn" and cfg.engine.verify_bundles
    assert cfg.source == (tmp_path / "config.yaml").resolve()


def test_full_file_and_relative_paths(tmp_path):
    group = grp.getgrgid(os.getgid()).gr_name
    cfg = load_config(
        _write(
            tmp_path,
            f"""
voices:
  - bundle: voices/joe
    engine: piper-vits
  - other
default_voice: joe
engine: {{backend: cpu, threads: 2, verify_bundles: false}}
listen:
  wyoming: run/w.sock
  http: null
  socket_mode: "0600"
  socket_group: {group}
  tcp_wyoming: "127.0.0.1:10200"
limits: {{queue_size: 2, request_timeout_s: 30, stall_timeout_s: 5}}
log_level: DEBUG
""",
        )
    )
    assert cfg.voices[0].bundle == tmp_path / "voices/joe"
    assert cfg.voices[0].engine == "piper-vits"
    assert cfg.voices[1].bundle == tmp_path / "other"
    assert cfg.engine.backend == "cpu" and cfg.engine.threads == 2
    assert cfg.listen.wyoming == tmp_path / "run/w.sock" and cfg.listen.http is None
    assert cfg.listen.socket_mode == 0o600 and cfg.listen.socket_group == group
    assert cfg.listen.tcp_wyoming == ("127.0.0.1", 10200)
    assert cfg.limits.request_timeout_s == 30.0 and cfg.log_level == "debug"


def test_config_is_frozen(tmp_path):
    cfg = load_config(_write(tmp_path, "voices: [a]\n"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.limits.queue_size = 9  # type: ignore[misc]
    assert isinstance(cfg, ServeConfig)


def test_cli_flags_override_the_file(tmp_path):
    path = _write(tmp_path, "voices: [a]\nlimits: {queue_size: 2}\n")
    args = _parser().parse_args(
        [
            "--bundle",
            "/b/one",
            "--bundle",
            "/b/two",
            "--socket-dir",
            str(tmp_path / "s"),
            "--http-socket",
            "none",
            "--queue-size",
            "7",
            "--backend",
            "cpu",
            "--tcp-http",
            "[::1]:8880",
            "--no-verify",
        ]
    )
    cfg = load_config(path, _overrides(args))
    assert [v.bundle for v in cfg.voices] == [Path("/b/one"), Path("/b/two")]
    assert cfg.listen.wyoming == tmp_path / "s" / "wyoming.sock"
    assert cfg.listen.http is None
    assert cfg.limits.queue_size == 7 and cfg.engine.backend == "cpu"
    assert cfg.listen.tcp_http == ("::1", 8880) and not cfg.engine.verify_bundles


@pytest.mark.parametrize(
    "text,message",
    [
        ("voices: []\n", "voices: expected a non-empty list, found []"),
        ("[1, 2]\n", "expected a mapping at the top level, found [1, 2]"),
        (
            "voices: [a]\nvoice: b\n",
            "expected only the fields ['accept_licenses', 'default_voice', 'engine', "
            "'limits', 'listen', 'log_level', 'voice_store', 'voices'], found unknown "
            "field(s) ['voice']",
        ),
        (
            "voices: [a]\nlimits: {queue_size: '4'}\n",
            "limits.queue_size: expected an integer > 0, found '4'",
        ),
        (
            "voices: [a]\nlimits: {queue_size: true}\n",
            "limits.queue_size: expected an integer > 0, found True",
        ),
        (
            "voices: [a]\nlimits: {request_timeout_s: -1}\n",
            "limits.request_timeout_s: expected a number > 0, found -1",
        ),
        (
            "voices: [a]\nengine: {backend: gpu}\n",
            "engine.backend: expected one of ['qnn', 'cpu'], found 'gpu'",
        ),
        (
            "voices: [a]\nlisten: {socket_mode: 660}\n",
            "listen.socket_mode: expected a mode written as a string, '0660', "
            "found 660",
        ),
        (
            "voices: [a]\nlisten: {socket_mode: '09'}\n",
            "listen.socket_mode: expected an octal string such as '0660', found '09'",
        ),
        (
            "voices: [a]\nlisten: {socket_group: no-such-group-xyz}\n",
            "listen.socket_group: expected an existing group, "
            "found 'no-such-group-xyz'",
        ),
        (
            "voices: [a]\nlisten: {tcp_http: '10200'}\n",
            "listen.tcp_http: expected HOST:PORT such as 127.0.0.1:10200, "
            "found '10200'",
        ),
        (
            "voices: [a]\nlisten: {tcp_http: 'h:99999'}\n",
            "listen.tcp_http: expected HOST:PORT such as 127.0.0.1:10200, "
            "found 'h:99999'",
        ),
        (
            "voices: [a]\nlisten: {wyoming: null, http: null}\n",
            "listen: expected at least one listener, found every one disabled",
        ),
        ("voices: [a]\nlisten: 3\n", "listen: expected a mapping, found 3"),
        (
            "voices: [a]\nlog_level: loud\n",
            "log_level: expected one of ['debug', 'info', 'warning', 'error'], "
            "found 'loud'",
        ),
        (
            "voices: [{engine: x}]\n",
            "voices[0].bundle: expected a path string, found nothing (missing field)",
        ),
    ],
)
def test_errors_name_file_and_field(tmp_path, text, message):
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}: {message}"


def test_invalid_yaml_names_the_file(tmp_path):
    path = _write(tmp_path, "voices: [\n")
    with pytest.raises(ConfigError, match=f"^{path}: invalid YAML"):
        load_config(path)


def test_null_means_the_default(tmp_path):
    cfg = load_config(
        _write(tmp_path, "voices: [a]\nlimits: {queue_size: null}\nlog_level: null\n")
    )
    assert cfg.limits.queue_size == 4 and cfg.log_level == "info"
    store = cfg.voice_store
    assert store.dir == Path("/var/lib/hexvoice/voices") and store.max_count == 100


def test_command_line_errors_say_so(monkeypatch, tmp_path):
    absent = tmp_path / "no"
    monkeypatch.setattr("daemon.service.config_file.DEFAULT_CONFIG_PATH", absent)
    with pytest.raises(ConfigError, match=r"^command line: limits.queue_size: exp"):
        load_config(None, {"voices": [{"bundle": "/b"}], "limits.queue_size": 0})


def test_unreadable_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.yaml")


def test_voices_are_checked_without_loading_models(tmp_path, test_voice, monkeypatch):
    monkeypatch.syspath_prepend(test_voice.env["PYTHONPATH"].split(os.pathsep)[0])
    good = load_config(_write(tmp_path, f"voices: [{test_voice.bundle}]\n"))
    (bundle,) = check_voices(good)
    assert bundle.engine == "test-tone"
    bad = load_config(
        _write(tmp_path, f"voices: [{{bundle: {test_voice.bundle}, engine: nope}}]\n")
    )
    with pytest.raises(ConfigError, match="no engine 'nope' registered"):
        check_voices(bad)
    missing = load_config(_write(tmp_path, "voices: [/nonexistent]\n"))
    with pytest.raises(ConfigError, match="voices\\[0\\]: /nonexistent: no voice.yaml"):
        check_voices(missing)


def test_shipped_example_config_is_valid(tmp_path):
    # systemd/config.yaml is what board/install.sh puts in /etc/hexvoice.
    src = Path(__file__).resolve().parents[3] / "systemd" / "config.yaml"
    group = grp.getgrgid(os.getgid()).gr_name  # the hexvoice group is board-only
    text = src.read_text().replace("socket_group: hexvoice", f"socket_group: {group}")
    cfg = load_config(_write(tmp_path, text))
    assert cfg.voices[0].bundle.name == "en_US-joe-medium"
    assert cfg.engine.backend == "qnn" and cfg.engine.power == "burst"
    assert cfg.listen.socket_mode == 0o660 and cfg.listen.tcp_wyoming is None
    assert cfg.limits.queue_size == 4 and cfg.log_level == "info"


def test_voice_store_section_and_flag(tmp_path):
    from daemon.cli.serve.command import _overrides, _parser

    text = "voices: [a]\nvoice_store: {dir: cloned, max_count: 0, max_bytes: 4096}\n"
    cfg = load_config(_write(tmp_path, text))
    # Relative to the config file, like every path in it; 0 voices: cloning off.
    assert cfg.voice_store.dir == tmp_path / "cloned"
    assert (cfg.voice_store.max_count, cfg.voice_store.max_bytes) == (0, 4096)
    flags = _overrides(_parser().parse_args(["--voice-dir", "/srv/voices"]))
    cfg = load_config(_write(tmp_path, "voices: [a]\n"), flags)
    assert cfg.voice_store.dir == Path("/srv/voices")
    assert load_config(_write(tmp_path, "voices: [a]\n")).voice_store.dir == Path(
        "/var/lib/hexvoice/voices"
    )
    with pytest.raises(ConfigError, match="voice_store.max_bytes: expected an integer"):
        load_config(_write(tmp_path, "voices: [a]\nvoice_store: {max_bytes: 0}\n"))
