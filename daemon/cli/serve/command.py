"""``hexvoice serve``: command line → validated configuration → the service.

Flags override the YAML file (``--config``, default /etc/hexvoice/config.yaml);
everything is checked before any model loads and a bad configuration exits 78
(EX_CONFIG) at once.  The running service itself is service.py.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence
from typing import Any

from daemon.service.config import ConfigError
from daemon.service.config_file import check_voices, load_config
from daemon.service.edge.systemd import EX_CONFIG


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    overrides = _overrides(args)
    try:
        cfg = load_config(args.config, overrides)
        check_voices(cfg)
    except ConfigError as exc:
        print(f"hexvoice serve: {exc}", file=sys.stderr)
        return EX_CONFIG
    logging.getLogger().setLevel(cfg.log_level.upper())
    # Imported only now: a config error is reported before aiohttp, wyoming and
    # the engines take a second to load.
    from daemon.cli.serve.service import Service

    return asyncio.run(Service(cfg, overrides).run())


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="hexvoice serve",
        description="Run the service: Wyoming and OpenAI-compatible HTTP on Unix "
        "sockets. Flags override the YAML config; a bad configuration exits 78 "
        "before any model loads.",
    )
    p.add_argument("--config", help="YAML config (default /etc/hexvoice/config.yaml)")
    p.add_argument("--bundle", action="append", help="voice bundle dir (repeatable)")
    p.add_argument(
        "--backend",
        choices=("qnn", "cpu"),
        help="qnn: the bundles' context binaries on the NPU (the x86 HTP simulator "
        "off a board); cpu: their ONNX graphs on onnxruntime CPU (default: qnn)",
    )
    p.add_argument("--socket-dir", help="put wyoming.sock and http.sock here")
    p.add_argument("--wyoming-socket", help="Wyoming socket path, or 'none'")
    p.add_argument("--http-socket", help="HTTP socket path, or 'none'")
    p.add_argument("--socket-group", help="group owning our sockets")
    p.add_argument("--socket-mode", help="octal mode of our sockets (0660)")
    p.add_argument(
        "--tcp-wyoming", metavar="HOST:PORT", help="also serve Wyoming on TCP"
    )
    p.add_argument("--tcp-http", metavar="HOST:PORT", help="also serve HTTP on TCP")
    p.add_argument("--queue-size", type=int, help="requests that may wait (4)")
    p.add_argument("--request-timeout", type=float, help="seconds per request (120)")
    p.add_argument("--qnn-lib-dir", help="QNN libraries")
    p.add_argument("--power", help="qnnrt power profile (e.g. burst)")
    p.add_argument("--no-verify", action="store_true", help="skip bundle hash checks")
    p.add_argument(
        "--voice-dir", help="cloned voices' directory (/var/lib/hexvoice/voices)"
    )
    p.add_argument(
        "--accept-license",
        action="append",
        metavar="ID",
        help="accept a licence an engine runs under, e.g. bilibili-model-use "
        "(repeatable; replaces the config's accept_licenses)",
    )
    p.add_argument(
        "--log-level",
        choices=("debug", "info", "warning", "error"),
        help="what the log shows (default: info)",
    )
    return p


def _overrides(a: argparse.Namespace) -> dict[str, Any]:
    """CLI flags as dotted config keys (argparse stays in this module)."""
    o: dict[str, Any] = {}
    if a.bundle:
        o["voices"] = [{"bundle": b} for b in a.bundle]
    if a.socket_dir:
        o["listen.wyoming"] = f"{a.socket_dir}/wyoming.sock"
        o["listen.http"] = f"{a.socket_dir}/http.sock"
    for flag, key in (
        ("wyoming_socket", "listen.wyoming"),
        ("http_socket", "listen.http"),
    ):
        v = getattr(a, flag)
        if v is not None:
            o[key] = None if v.lower() == "none" else v
    for flag, key in (
        ("backend", "engine.backend"),
        ("socket_group", "listen.socket_group"),
        ("socket_mode", "listen.socket_mode"),
        ("tcp_wyoming", "listen.tcp_wyoming"),
        ("tcp_http", "listen.tcp_http"),
        ("queue_size", "limits.queue_size"),
        ("request_timeout", "limits.request_timeout_s"),
        ("qnn_lib_dir", "engine.qnn_lib_dir"),
        ("power", "engine.power"),
        ("log_level", "log_level"),
        ("voice_dir", "voice_store.dir"),
    ):
        v = getattr(a, flag)
        if v is not None:
            o[key] = v
    if a.accept_license:
        o["accept_licenses"] = list(a.accept_license)
    if a.no_verify:
        o["engine.verify_bundles"] = False
    return o
