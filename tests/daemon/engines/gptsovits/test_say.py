"""`hexvoice say --bundle` (daemon.cli.say.in_process) with a gpt-sovits-v2pro
bundle."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from daemon.cli.say.in_process import main

soundfile = pytest.importorskip("soundfile")


def test_say_writes_a_seeded_32k_wav(gsv_bundle, tmp_path: Path, capsys):
    a, b = tmp_path / "a.wav", tmp_path / "b.wav"
    args = ["--bundle", str(gsv_bundle.root), "--backend", "cpu", "--seed", "4"]
    assert main(["你好，世界。", "-o", str(a), *args]) == 0
    assert "first audio after" in capsys.readouterr().err
    assert main(["你好，世界。", "-o", str(b), *args]) == 0
    audio, rate = soundfile.read(a, dtype="int16")
    assert rate == 32000 and audio.ndim == 1 and len(audio) > rate // 2
    assert np.abs(audio).max() > 300
    assert a.read_bytes() == b.read_bytes()


def test_say_refuses_a_speed_out_of_upstreams_range(gsv_bundle, tmp_path: Path, capsys):
    out = tmp_path / "out.wav"
    args = ["-o", str(out), "--bundle", str(gsv_bundle.root), "--backend", "cpu"]
    assert main(["你好。", *args, "--speed", "1.7"]) == 1
    err = capsys.readouterr().err  # the one check, against the declared capabilities
    assert "speed: expected a number in [0.6, 1.65], found 1.7" in err
    assert not out.exists()
