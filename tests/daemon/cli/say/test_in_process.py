"""`hexvoice say` in-process: a real bundle, the registered engine, a real WAV."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("piper")
soundfile = pytest.importorskip("soundfile")

from daemon.cli.say.in_process import main  # noqa: E402
from tests.piper_bundles import (  # noqa: E402
    CPU_OPTIONS,
    bundle_dir,
)


@pytest.fixture()
def bundle(pytestconfig: pytest.Config) -> Path:
    return bundle_dir(pytestconfig, CPU_OPTIONS)


def _say(bundle: Path, out: Path, *extra: str) -> int:
    return main(["Hello world. Bye.", "-o", str(out), "--bundle", str(bundle),
                 "--backend", "cpu", *extra])  # fmt: skip


def test_say_writes_a_seeded_wav(bundle: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    a, b = tmp_path / "a.wav", tmp_path / "b.wav"
    assert _say(bundle, a, "--seed", "3") == 0
    assert "first audio after" in capsys.readouterr().err
    assert _say(bundle, b, "--seed", "3") == 0
    audio, rate = soundfile.read(a, dtype="int16")
    assert rate == 22050 and audio.ndim == 1
    assert 1.0 < len(audio) / rate < 3.0  # two short sentences and one pause
    assert np.abs(audio).max() > 3000  # speech, not silence
    assert a.read_bytes() == b.read_bytes()
    assert not list(tmp_path.glob(".*.partial"))


def test_say_resamples_at_the_edge(bundle: Path, tmp_path: Path) -> None:
    native, low = tmp_path / "native.wav", tmp_path / "16k.wav"
    assert _say(bundle, native, "--seed", "3") == 0
    assert _say(bundle, low, "--seed", "3", "--rate", "16000") == 0
    a, ra = soundfile.read(native, dtype="float32")
    b, rb = soundfile.read(low, dtype="float32")
    assert (ra, rb) == (22050, 16000)
    assert abs(len(b) / rb - len(a) / ra) < 0.01  # same duration, new rate
    assert np.sqrt(np.mean(b**2)) == pytest.approx(np.sqrt(np.mean(a**2)), rel=0.15)


def test_say_fails_clearly_and_leaves_no_file(
    bundle: Path, tmp_path: Path, capsys
) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "out.wav"
    args = ["-o", str(out), "--bundle", str(bundle), "--backend", "cpu"]
    assert main(["   ", *args]) == 1
    assert "text: expected text to speak, found '   '" in capsys.readouterr().err
    assert main(["Hi.", *args, "--speed", "9"]) == 1
    speed = "speed: expected a number in [0.25, 4.0], found 9.0"
    assert speed in capsys.readouterr().err
    assert main(["Hi.", "-o", str(out), "--bundle", str(tmp_path)]) == 1
    assert "not a voice bundle" in capsys.readouterr().err
    assert not out.exists() and not list(tmp_path.glob(".*.partial"))
