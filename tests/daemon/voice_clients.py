"""Clients the cloned-voice service tests share (the tone engine's in
tests/daemon/protocols/openai, GPT-SoVITS' and Qwen3-TTS' in
tests/daemon/service/cloning): a served daemon's config and lifetime, its Wyoming
``info``, the ``openai`` SDK over its socket, WAV bytes for a clip, and what the
voice store holds."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import openai
import soundfile as sf
import yaml
from wyoming.client import AsyncClient
from wyoming.info import Describe, Info

from tests.daemon.conftest import Daemon, ServiceVoice, start_daemon

#: seconds to wait for the Wyoming ``info`` answer
INFO_TIMEOUT_S = 30
#: httpx's own default timeout (seconds), kept where a test does not ask for more
SDK_TIMEOUT_S = 5.0


def cloning_setup(
    root: Path, base_bundle: Path, rate: int, *others: Path
) -> tuple[ServiceVoice, Path, dict[str, Any]]:
    """(the cloning base voice, ``root``, the daemon's config sections): that
    bundle served after ``others``, a voice store in ``root``/store, the CPU
    backend (these tests are about the service, not the graphs)."""
    base = ServiceVoice(base_bundle, bundle_name(base_bundle), rate, {})
    sections = {
        "voices": [{"bundle": str(b)} for b in (*others, base_bundle)],
        "voice_store": {"dir": str(root / "store")},
        "engine": {"backend": "cpu"},
    }
    return base, root, sections


@contextmanager
def serving(tmp: Path, voice: ServiceVoice, **sections: Any) -> Iterator[Daemon]:
    """A daemon up (a module's, or the same config again after a restart),
    stopped cleanly after (unless a test already stopped it) with no traceback
    in its log."""
    d = start_daemon(tmp, voice, **sections)
    try:
        yield d
    finally:
        if d.proc.poll() is None:
            assert d.stop() == 0, d.stderr()
    assert "Traceback" not in d.stderr(), d.stderr()


def bundle_name(bundle: Path) -> str:
    """The voice name a bundle declares in its voice.yaml."""
    return str(yaml.safe_load((bundle / "voice.yaml").read_text())["name"])


def wav_bytes(pcm: np.ndarray, rate: int) -> bytes:
    """``pcm`` as a 16-bit WAV file, as a client would upload it."""
    buf = io.BytesIO()
    sf.write(buf, pcm, rate, format="WAV", subtype="PCM_16")
    return buf.getvalue()


def info(d: Daemon) -> Info:
    """The daemon's Wyoming ``info`` (Describe → Info)."""

    async def go() -> Info:
        async with AsyncClient.from_uri(d.uri) as c:
            await c.write_event(Describe().event())
            while True:
                e = await asyncio.wait_for(c.read_event(), INFO_TIMEOUT_S)
                assert e is not None
                if Info.is_type(e.type):
                    return Info.from_event(e)

    return asyncio.run(go())


def sdk(d: Daemon, timeout: float = SDK_TIMEOUT_S) -> openai.OpenAI:
    """The ``openai`` SDK talking to the daemon's HTTP socket."""
    http = httpx.Client(transport=httpx.HTTPTransport(uds=str(d.http)), timeout=timeout)
    return openai.OpenAI(
        base_url="http://localhost/v1", api_key="x", max_retries=0, http_client=http
    )


def stored(store: Path) -> list[str]:
    """The files in the voice store (none if it was never made)."""
    return sorted(p.name for p in store.iterdir()) if store.exists() else []
