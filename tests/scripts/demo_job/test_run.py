"""scripts/demo_job/run.py end to end on the CPU backend: the real service, the real
client, a WAV; and it says what really runs (no NPU claim on onnxruntime CPU).

The demo's own voice conversion is covered by test_make_demo_voice.py; here the
tests' joe bundle is served with ``--bundle`` so the run costs seconds.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import soundfile

from tests.piper_bundles import CPU_OPTIONS, bundle_dir

pytest.importorskip("piper")
ROOT = Path(__file__).resolve().parents[3]
DEMO_TIMEOUT_S = 180.0


def test_demo_on_cpu_says_what_runs_and_makes_speech(
    pytestconfig: pytest.Config, tmp_path: Path
):
    bundle = bundle_dir(pytestconfig, CPU_OPTIONS)
    out = tmp_path / "hello.wav"
    command = [sys.executable, "-m", "scripts.demo_job.run", "--backend", "cpu"]
    command += ["--bundle", str(bundle), "--socket-dir", str(tmp_path / "run")]
    command += ["--out", str(out)]
    p = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=DEMO_TIMEOUT_S
    )
    assert p.returncode == 0, p.stderr
    demo = [ln for ln in p.stderr.splitlines() if ln.startswith("[demo]")]
    said = "\n".join(demo)
    assert "runs its ONNX graphs on onnxruntime CPU (no QNN, no NPU)" in said, said
    assert "Qualcomm NPU" not in said and "HTP v73" not in said, said
    assert "service exited 0 and removed its sockets" in said, said
    # A quiet success: our progress lines, no warnings, no raw terminal colours.
    assert "WARNING" not in p.stderr and "\x1b[" not in p.stderr, p.stderr
    info = soundfile.info(str(out))
    assert info.samplerate == 22050 and info.duration > 0.5
