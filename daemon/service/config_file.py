"""``config.yaml`` and the command line's overrides, read into a ``ServeConfig``.

``load_config`` reads the file (relative paths against its own directory,
socket paths from the command line against the working directory), applies
dotted-key overrides (``--bundle``... as ``voices``, ``limits.queue_size``) and
validates the result completely through the schema (config.py);
``check_voices`` then reads every bundle's manifest and resolves its engine,
so a typo fails in milliseconds, before any model loads.
"""

from __future__ import annotations

import grp
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

import yaml

from daemon.config.reader import fail, read
from daemon.sdk.bundles.manifest import Bundle, BundleError
from daemon.sdk.license import check_accepted
from daemon.sdk.registry import engine_class
from daemon.service.config import ConfigError, ServeConfig

DEFAULT_CONFIG_PATH: Final = Path("/etc/hexvoice/config.yaml")


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
            raise fail(where, "", "a mapping at the top level", loaded, ConfigError)
        data = _relative_to(loaded or {}, src.parent.resolve())
    for key, value in (overrides or {}).items():
        _set_dotted(data, key, value)
    cfg = read(_absolute_sockets(data), ServeConfig, where=where, error=ConfigError)
    group = cfg.listen.socket_group
    if group is not None:
        try:
            grp.getgrnam(group)
        except KeyError:
            raise fail(
                where, "listen.socket_group", "an existing group", group, ConfigError
            ) from None
    return replace(cfg, source=src.resolve() if src else None)


def check_voices(cfg: ServeConfig) -> list[Bundle]:
    """Read every manifest and resolve its engine (no model is loaded)."""
    bundles = []
    where = cfg.source or "command line"
    for i, v in enumerate(cfg.voices):
        try:
            b = Bundle.load(v.bundle)
            cls = engine_class(v.engine or b.engine)
            check_accepted(cls, b, cfg.accept_licenses)
        except (BundleError, LookupError, ImportError) as exc:
            raise ConfigError(f"{where}: voices[{i}]: {exc}") from exc
        bundles.append(b)
    return bundles


def _relative_to(data: dict[str, Any], base: Path) -> dict[str, Any]:
    """Resolve the file's relative paths against its own directory; a bare
    string voice is its bundle."""
    out = dict(data)
    voices = out.get("voices")
    if isinstance(voices, list):
        out["voices"] = [
            _rebase({"bundle": v} if isinstance(v, str) else v, base, "bundle")
            if isinstance(v, dict | str)
            else v
            for v in voices
        ]
    for section, key in (
        ("listen", "wyoming"),
        ("listen", "http"),
        ("engine", "qnn_lib_dir"),
        ("voice_store", "dir"),
    ):
        if isinstance(out.get(section), dict):
            out[section] = _rebase(out[section], base, key)
    return out


def _absolute_sockets(data: dict[str, Any]) -> dict[str, Any]:
    """Socket paths from the command line are relative to the working dir."""
    listen = data.get("listen")
    if not isinstance(listen, dict):
        return data
    fixed = {
        k: str(Path(v).absolute())
        for k, v in listen.items()
        if k in ("wyoming", "http") and isinstance(v, str)
    }
    return {**data, "listen": {**listen, **fixed}}


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
