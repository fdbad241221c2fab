"""A running service with a TTS voice and an ASR model side by side.

``asr_daemon(tmp, test_voice, bins, onnx_dir)`` starts ``hexvoice serve`` on
the tone voice (test-tone) and a ``test-vad`` model named ``ASR_MODEL`` (both on
the simulator); a module fixture yields it and stops it (tests of the OpenAI
route, the CLI, Wyoming ASR).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from tests.daemon.conftest import Daemon, ServiceVoice, start_daemon
from tests.daemon.vad_engine import write_bundle

ASR_MODEL: Final = "vad"


def model_bundle(d: Daemon) -> Path:
    """The ASR model's bundle of a service ``asr_daemon`` started."""
    return d.config.parent.parent / "vad_bundle"


def asr_daemon(
    tmp: Path, voice: ServiceVoice, bins: Any, onnx_dir: Path, **sections: Any
) -> Iterator[Daemon]:
    """A module fixture's body: the service, stopped cleanly and traceback-free."""
    vad = write_bundle(
        tmp / "vad_bundle",
        bins["matmul_tanh"].bin_path,
        onnx_dir / "matmul_tanh.onnx",
        name=ASR_MODEL,
    )
    voices = [{"bundle": str(voice.bundle)}, {"bundle": str(vad)}]
    d = start_daemon(tmp / "service", voice, voices=voices, **sections)
    yield d
    assert d.stop() == 0, d.stderr()
    assert "Traceback" not in d.stderr(), d.stderr()


#: The Piper demo voice as the service names it, and its rate.
JOE: Final = "en_US-joe-medium"
JOE_RATE: Final = 22050


def speech_daemon(tmp: Path, joe_bundle: Path, asr_bundle: Path) -> Iterator[Daemon]:
    """A session fixture's body: the Piper demo voice and a Qwen3-ASR bundle in
    one ``hexvoice serve --backend cpu`` (round trips TTS -> WAV -> ASR)."""
    joe = ServiceVoice(joe_bundle, JOE, JOE_RATE, env={})
    voices = [{"bundle": str(joe_bundle)}, {"bundle": str(asr_bundle)}]
    d = start_daemon(tmp, joe, voices=voices, engine={"backend": "cpu"})
    yield d
    assert d.stop() == 0, d.stderr()
    assert "Traceback" not in d.stderr(), d.stderr()
