"""What the voice store holds, as the service knows it: the voices that read
back and the damaged files, by name, kept in step with the directory.

The store is read at start and again at each reload (files added or removed by
hand are seen then); a name the API finds taken on disk is read at once
(``set``) rather than left stuck.  A change made while a scan runs in its
thread wins over what the scan found.  What changed is logged once: a file
gone, one without a checksum, one damaged.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Final

from daemon.service.cloning.voicefile import Entry
from daemon.service.cloning.voicestore import Damaged, VoiceStore
from daemon.service.config import DEFAULT_VOICE_DIR, VoiceStoreConfig

_LOGGER = logging.getLogger(__name__)
#: How to turn cloning on when the default store is missing.
NO_STORE_HINT: Final = " (set voice_store.dir, or --voice-dir DIR, to keep them)"


class StoredVoices:
    """The store's voices and damaged files (event loop only)."""

    def __init__(self, cfg: VoiceStoreConfig) -> None:
        self.store = VoiceStore(cfg)
        self.entries: dict[str, Entry] = {}
        #: files that do not read back, by name: listed, removable, replaceable
        self.damaged: dict[str, Damaged] = {}
        #: why the store cannot be used (None once it is open)
        self.problem: str | None = "the voice store is not open yet"
        self._touched: set[str] | None = None  # changed while a scan runs

    async def open(self) -> None:
        """Read the store (at start and at each reload); a store that cannot be
        read leaves cloning off (the service serves on, and says so once)."""
        self._touched = set()
        try:
            scan = await asyncio.to_thread(self.store.load)
        except OSError as exc:
            self.problem = f"voice store {self.store.dir}: {exc.strerror or exc}"
            # The default store is the systemd unit's StateDirectory: missing
            # outside systemd (a checkout, the README's `hexvoice serve`), which
            # is no fault; a store someone configured and cannot be used is.
            routine = self.store.dir == DEFAULT_VOICE_DIR and isinstance(
                exc, FileNotFoundError
            )
            _LOGGER.log(
                logging.INFO if routine else logging.WARNING,
                "%s: cloned voices are off%s",
                self.problem,
                NO_STORE_HINT if routine else "",
            )
            return
        finally:
            touched, self._touched = self._touched, None
        for name in touched:  # added or removed meanwhile: that is the news
            scan.entries.pop(name, None)
            scan.damaged.pop(name, None)
            if name in self.entries:
                scan.entries[name] = self.entries[name]
            if name in self.damaged:
                scan.damaged[name] = self.damaged[name]
        for name in self.entries.keys() - scan.entries.keys() - scan.damaged.keys():
            _LOGGER.warning("cloned voice %r: its file is gone", name)
        for name, e in scan.entries.items():
            if not e.verified and self.entries.get(name) is not e:
                _LOGGER.warning(
                    "cloned voice %r: its file has no checksum (written before "
                    "hexvoice kept them), so damage to it cannot be told; "
                    "register it again to give it one",
                    name,
                )
        for name, d in scan.damaged.items():
            if self.damaged.get(name) != d:
                _LOGGER.warning(
                    "voice store %s: %s; listed as damaged (delete it or register "
                    "it again)",
                    self.store.dir,
                    d.reason,
                )
        self.entries, self.damaged, self.problem = scan.entries, scan.damaged, None
        n, damaged = len(self.entries), len(self.damaged)
        _LOGGER.info(
            "voice store %s: %d cloned voice(s), %d damaged", self.store.dir, n, damaged
        )

    async def reload(self, cfg: VoiceStoreConfig) -> None:
        """A reload's caps apply at once, and the files are read again; another
        directory takes effect at the restart."""
        self.store.max_count, self.store.max_bytes = cfg.max_count, cfg.max_bytes
        if cfg.dir.absolute() != self.store.dir:
            _LOGGER.warning("voice_store.dir changes take effect at the next restart")
        await self.open()

    def held(self) -> dict[str, Entry | Damaged]:
        """Every name stored, a voice or a damaged file (a copy)."""
        return {**self.entries, **self.damaged}

    def set(self, name: str, found: Entry | Damaged | None) -> None:
        """What is stored as ``name`` now (None: nothing)."""
        self.entries.pop(name, None)
        self.damaged.pop(name, None)
        if isinstance(found, Entry):
            self.entries[name] = found
        elif found is not None:
            self.damaged[name] = found
        if self._touched is not None:
            self._touched.add(name)
