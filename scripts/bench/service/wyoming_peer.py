"""`hexvoice serve` vs wyoming-piper, same voice, measured by the ecosystem's tool.

    python -m scripts.bench.service.wyoming_peer --bundle DIR [--venv DIR]
        [--alternate N]

Both servers listen on TCP on localhost and serve the Piper voice the bundle
was converted from (the joe demo voice): ours on the onnxruntime CPU backend,
wyoming-piper with piper-tts. `wyoming-bench tts` (PyPI) measures both modes
(non-streaming: one synthesize; streaming: synthesize-start/chunk/stop) on the
ten oracle sentences. The peer and the tool live in a scratch venv that this
script creates (never project dependencies). Runs alternate between the two
servers N times (a busy machine slows both alike); the means over the runs are
compared: target total within 1.1x of wyoming-piper and TTFT below it.
"""

from __future__ import annotations

import argparse
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Final

from scripts.bench.service.serve import ROOT, start_daemon
from scripts.piper.oracle import SENTENCES, default_voice

# The peer and the tool, pinned: the versions these numbers were taken with.
PEER_PACKAGES: Final = ("wyoming-bench==2026.10.0", "wyoming-piper==2.5.2")
DEFAULT_VENV: Final = ROOT / ".cache" / "wyoming-peer"
HOST: Final = "127.0.0.1"
PEER_READY_S: Final = 120.0
# Target: total time at most 1.1x the wyoming-piper peer's (TTFT: below it).
TOTAL_RATIO: Final = 1.1
MODES: Final = ("non_streaming", "streaming")
# wyoming-bench summary row: "server ok TTFT_mean TTFT_p95 Total_mean ..."
_ROW: Final = re.compile(
    r"^\s+(\S+:\d+) \(.*?\)\s+(\d+)\s+([\d.]+)\s+[\d.]+\s+([\d.]+)"
)


def ensure_venv(venv: Path) -> Path:
    """The scratch venv's bin dir, created and filled on first use."""
    bin_dir = venv / "bin"
    if not (bin_dir / "wyoming-bench").is_file():
        print(f"# installing {' '.join(PEER_PACKAGES)} into {venv}", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(bin_dir / "python"), "-m", "pip", "install", "-q"]
        subprocess.run([*pip, *PEER_PACKAGES], check=True)
    return bin_dir


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def start_peer(bin_dir: Path, port: int, log: Path) -> subprocess.Popen:
    voice = default_voice()
    argv = [
        str(bin_dir / "wyoming-piper"),
        "--voice", voice.name.removesuffix(".onnx"),
        "--uri", f"tcp://{HOST}:{port}",
        "--data-dir", str(voice.parent),
        "--local-files-only",
    ]  # fmt: skip
    proc = subprocess.Popen(argv, stderr=open(log, "wb"))  # noqa: SIM115
    deadline = time.monotonic() + PEER_READY_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"wyoming-piper exited:\n{log.read_text()[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex((HOST, port)) == 0:
                return proc
        time.sleep(0.5)
    proc.terminate()
    raise SystemExit(f"wyoming-piper not listening after {PEER_READY_S:.0f} s")


def bench(bin_dir: Path, server: str, texts: Path, rounds: int) -> dict[str, tuple]:
    """{mode: (TTFT mean ms, total mean ms)} from one wyoming-bench run."""
    argv = [str(bin_dir / "wyoming-bench"), "tts", server, "--texts-file", str(texts)]
    argv += ["--mode", "both", "--rounds", str(rounds), "--warmup", "1"]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    found, mode = {}, None
    for line in out.splitlines():
        if line.strip().strip("[]") in MODES:
            mode = line.strip().strip("[]")
        elif mode and (m := _ROW.match(line)):
            found[mode] = (float(m.group(3)), float(m.group(4)))
    if set(found) != set(MODES):
        raise SystemExit(f"could not read wyoming-bench's summary:\n{out[-3000:]}")
    return found


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bundle", type=Path, required=True, help="piper-vits bundle")
    p.add_argument("--venv", type=Path, default=DEFAULT_VENV, help="scratch venv")
    p.add_argument("--alternate", type=int, default=3, help="runs per server")
    p.add_argument("--rounds", type=int, default=1, help="wyoming-bench --rounds")
    a = p.parse_args(argv)
    bin_dir = ensure_venv(a.venv)
    with tempfile.TemporaryDirectory(prefix="hvpeer") as tmp:
        tmpdir = Path(tmp)
        texts = tmpdir / "texts.txt"
        texts.write_text("\n".join(SENTENCES) + "\n")
        ours_port, peer_port = free_port(), free_port()
        listen = {"tcp_wyoming": f"{HOST}:{ours_port}"}
        daemon, _ = start_daemon(tmpdir, a.bundle.resolve(), "cpu", listen)
        peer = start_peer(bin_dir, peer_port, tmpdir / "peer.log")
        servers = {
            "hexvoice": f"{HOST}:{ours_port}",
            "wyoming-piper": f"{HOST}:{peer_port}",
        }
        runs: dict[str, list[dict[str, tuple]]] = {k: [] for k in servers}
        try:
            for i in range(a.alternate):
                for name, server in servers.items():
                    runs[name].append(bench(bin_dir, server, texts, a.rounds))
                    print(f"# run {i + 1}/{a.alternate} {name}: {runs[name][-1]}")
        finally:
            for proc in (daemon, peer):
                proc.terminate()
                proc.wait(60)
    report(runs)
    return 0


def report(runs: dict[str, list[dict[str, tuple]]]) -> None:
    print(f"\n{'mode':<14} {'server':<14} {'TTFT ms':>9} {'total ms':>9}")
    means: dict[tuple[str, str], tuple[float, float]] = {}
    for mode in MODES:
        for name, got in runs.items():
            ttft = sum(r[mode][0] for r in got) / len(got)
            total = sum(r[mode][1] for r in got) / len(got)
            means[mode, name] = ttft, total
            print(f"{mode:<14} {name:<14} {ttft:9.1f} {total:9.1f}")
        (ot, oa), (pt, pa) = means[mode, "hexvoice"], means[mode, "wyoming-piper"]
        verdict = "ok" if oa <= TOTAL_RATIO * pa and ot < pt else "MISSED"
        print(
            f"{mode:<14} {'ratio':<14} {ot / pt:8.2f}x {oa / pa:8.2f}x  "
            f"(target TTFT < 1x, total <= {TOTAL_RATIO}x: {verdict})"
        )
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
