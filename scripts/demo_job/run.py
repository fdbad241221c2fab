"""The main job end to end: demo voice → service on a Unix socket → WAV → stop.

    python -m scripts.demo_job.run [--backend qnn|cpu] [--text TEXT] [--out hello.wav]
                               [--bundle DIR] [--socket-dir run]

1. converts the pip-installed Piper voice (en_US joe) into a bundle for HTP v73
   (cached by content under .cache/demo-voice);
2. starts ``hexvoice serve`` with its sockets under ./run and waits for systemd's
   READY=1 on a real NOTIFY_SOCKET (the service warms up every graph first);
3. synthesizes TEXT through the running service with ``hexvoice say``;
4. stops the service with SIGTERM and checks it exited cleanly.

The default backend is the QNN HTP simulator: it is slow (seconds per vocoder
window), so the demo voice keeps only short-sentence buckets.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[2]
#: What each backend really runs the demo bundle's graphs on (x86: no NPU here).
RUNS_ON: Final = {
    "qnn": "its HTP v73 context binaries on the QNN HTP simulator",
    "cpu": "its ONNX graphs on onnxruntime CPU (no QNN, no NPU)",
}
#: Why the next step is quiet for a while (measured on 2 shared x86 cores: warm-up
#: 41 s, the default sentence 68 s on the simulator; 3 s and 1 s on CPU).
WAIT_HINT: Final = {
    "qnn": (
        "; the simulator warms up every graph first: tens of seconds",
        "; the simulator takes seconds per vocoder window: about a minute",
    ),
    "cpu": ("", ""),
}
DEFAULT_TEXT: Final = "Hello from hexvoice."
READY_TIMEOUT_S: Final = 900.0  # simulator warm-up of every graph
STOP_TIMEOUT_S: Final = 120.0
NOTIFY_BYTES: Final = 4096


def _say(msg: str) -> None:
    print(f"[demo] {msg}", file=sys.stderr, flush=True)


def _wait_ready(notify: socket.socket, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"hexvoice serve exited early with {proc.returncode}")
        try:
            data = notify.recv(NOTIFY_BYTES).decode(errors="replace")
        except TimeoutError:
            continue
        for line in data.splitlines():
            if line.startswith("STATUS="):
                _say(f"service: {line[7:]}")
            if line == "READY=1":
                return
    raise RuntimeError(f"service not ready after {READY_TIMEOUT_S:.0f} s")


def arguments() -> argparse.ArgumentParser:
    """The options; standard library only, so ``scripts/demo --help`` answers on
    a fresh machine before anything is installed (the script runs it with the
    system python first)."""
    p = argparse.ArgumentParser(
        prog="scripts/demo",
        description="The main job end to end: build the demo voice (the Piper "
        "en_US joe voice as HTP v73 context binaries), start hexvoice serve on a "
        "Unix socket, synthesize a sentence into a WAV, stop the service.",
    )
    p.add_argument(
        "--backend",
        choices=("qnn", "cpu"),
        default="qnn",
        help="qnn: the context binaries on the x86 HTP simulator (slow: about a "
        "minute for the sentence); cpu: the ONNX graphs on onnxruntime CPU "
        "(seconds) (default: qnn)",
    )
    p.add_argument(
        "--text", default=DEFAULT_TEXT, help=f"what to say (default: {DEFAULT_TEXT!r})"
    )
    p.add_argument(
        "--out",
        type=Path,
        default=ROOT / "hello.wav",
        help="the WAV to write (default: hello.wav in the checkout)",
    )
    p.add_argument(
        "--bundle", type=Path, help="serve this bundle instead of the demo voice"
    )
    p.add_argument(
        "--socket-dir",
        type=Path,
        default=ROOT / "run",
        help="where the service's sockets go (default: run/ in the checkout)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = arguments().parse_args(argv)
    # Imported after parsing: --help must work before the install.
    import soundfile

    from scripts.demo_job.make_voice import make

    if args.bundle is None:
        cache = ROOT / ".cache" / "demo-voice"
        _say(f"[1/4] demo voice: Piper en_US joe as a bundle under {cache}")
        bundle = make(cache, "simulator", small=True)
    else:
        _say("[1/4] voice bundle given with --bundle")
        bundle = args.bundle
    _say(f"      {bundle}; --backend {args.backend} runs {RUNS_ON[args.backend]}")
    run_dir = args.socket_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    wyoming = run_dir / "wyoming.sock"
    hexvoice = Path(sys.executable).with_name("hexvoice")

    with tempfile.TemporaryDirectory(prefix="hexvoice-demo-") as tmp:
        notify_path = Path(tmp) / "notify"
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(str(notify_path))
        notify.settimeout(1.0)
        env = {**os.environ, "NOTIFY_SOCKET": str(notify_path)}
        _say(
            f"[2/4] starting hexvoice serve ({args.backend}); sockets in {run_dir}"
            + WAIT_HINT[args.backend][0]
        )
        t0 = time.monotonic()
        proc = subprocess.Popen(
            [
                str(hexvoice),
                "serve",
                "--bundle",
                str(bundle),
                "--backend",
                args.backend,
                "--socket-dir",
                str(run_dir),
            ],
            env=env,
        )
        try:
            _wait_ready(notify, proc)
            _say(f"      ready after {time.monotonic() - t0:.1f} s")
            _say(
                f"[3/4] hexvoice say {args.text!r} → {args.out}"
                + WAIT_HINT[args.backend][1]
            )
            t1 = time.monotonic()
            subprocess.run(
                [
                    str(hexvoice),
                    "say",
                    args.text,
                    "-o",
                    str(args.out),
                    "--socket",
                    str(wyoming),
                ],
                check=True,
            )
            synth_s = time.monotonic() - t1
        finally:
            _say("[4/4] stopping the service (SIGTERM)")
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=STOP_TIMEOUT_S)
            notify.close()
    if code != 0:
        _say(f"service exited with {code}")
        return 1
    if wyoming.exists():
        _say(f"service left {wyoming} behind")
        return 1
    info = soundfile.info(str(args.out))
    _say(
        f"done: {args.out} — {info.duration:.2f} s of {info.samplerate} Hz speech, "
        f"synthesized in {synth_s:.1f} s; service exited 0 and removed its sockets"
    )
    _say(
        f"again, without the service: {os.path.relpath(hexvoice, ROOT)} say "
        f'"Hello." -o hello.wav --bundle {os.path.relpath(bundle, ROOT)} --backend cpu'
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
