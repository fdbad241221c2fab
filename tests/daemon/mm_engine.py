"""What the two test engines share: the one graph they run, ``mm`` (x -> y), and
a record of which thread made each call (for the one-NPU-thread tests)."""

from __future__ import annotations

import threading

from daemon.sdk.bundles.manifest import Bundle
from daemon.sdk.capabilities import VoiceInfo
from daemon.sdk.graphs import Runner


class MmEngine:
    def __init__(self) -> None:
        self._mm: Runner | None = None
        self._voice: VoiceInfo | None = None
        #: (method, thread name) of every call, for the one-NPU-thread test
        self.calls: list[tuple[str, str]] = []

    def _note(self, method: str) -> None:
        self.calls.append((method, threading.current_thread().name))

    @classmethod
    def requirements(cls, bundle: Bundle) -> dict[str, dict[str, None]]:
        return {"mm": {"x": None, "y": None}}
