"""The README's usage block, run as written against the demo voice (CPU backend).

The block (the ```sh fence under "## Using it") is parsed into commands, a
trailing backslash continuing a line. Its ``hexvoice serve`` line runs as the
service, every other line through bash, all in a scratch directory laid out as
the README assumes: ``.cache/demo-voice/en_US-joe-medium-small`` links to the
tests' joe bundle and ``run/`` receives the sockets. Nothing in a command is
substituted. The README's promise about text the voice cannot read is checked
on the same service.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np
import pytest
import soundfile
from wyoming.client import AsyncClient
from wyoming.error import Error
from wyoming.tts import Synthesize

from tests.daemon.conftest import START_TIMEOUT_S, NotifySink
from tests.piper_bundles import CPU_OPTIONS, bundle_dir

pytest.importorskip("piper")
ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: The demo's bundle link, as the README names it (scripts/demo_job/make_voice.py).
DEMO_BUNDLE = Path(".cache/demo-voice/en_US-joe-medium-small")
VOICE = "en_US-joe-medium"
RATE = 22050
COMMAND_TIMEOUT_S = 120.0
#: Text the English demo voice cannot read: the README's own example.
CHINESE = "你好，世界。"


def fenced(text: str, heading: str, lang: str = "sh") -> str:
    """The first ```lang block after the line ``heading``."""
    section = text[text.index(f"\n{heading}\n") :]
    found = re.search(rf"^```{lang}\n(.*?)^```$", section, re.M | re.S)
    assert found, f"README: no ```{lang} block under {heading!r}"
    return found[1]


def commands_of(block: str) -> list[str]:
    """A shell block's commands, a trailing backslash continuing a line."""
    commands: list[str] = []
    pending = ""
    for line in block.splitlines():
        if line.endswith("\\"):
            pending += line[:-1]
            continue
        line, pending = pending + line, ""
        if line.strip() and not line.lstrip().startswith("#"):
            commands.append(line.strip())
    return commands


def usage_block(text: str) -> list[str]:
    """Commands of the first ```sh block after "## Using it"."""
    return commands_of(fenced(text, "## Using it"))


COMMANDS = usage_block(README.read_text())
SERVE = [c for c in COMMANDS if c.startswith("hexvoice serve ")]
CLIENTS = [c for c in COMMANDS if c not in SERVE]


@dataclass
class Service:
    cwd: Path
    proc: subprocess.Popen[bytes]
    log: Path
    env: dict[str, str]

    def run(self, command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-o", "pipefail", "-c", command],
            cwd=self.cwd, env=self.env, capture_output=True, text=True,
            timeout=COMMAND_TIMEOUT_S,
        )  # fmt: skip

    def run_checked(
        self, command: str, rate: int, min_seconds: float = 0.0
    ) -> subprocess.CompletedProcess[str]:
        """``command`` run, succeeding; a ``-o x.wav`` it writes is audio at
        ``rate`` longer than ``min_seconds``, a curl's output the API's JSON."""
        p = self.run(command)
        assert p.returncode == 0, f"{command}\n{p.stdout}\n{p.stderr}"
        out = re.search(r" -o (\S+)", command)
        if out and out[1].endswith(".wav"):
            info = soundfile.info(str(self.cwd / out[1]))
            assert info.samplerate == rate and info.duration > min_seconds, out[1]
        elif command.startswith("curl "):
            json.loads(p.stdout)  # the API's JSON, not an error page
        return p

    def http(self) -> httpx.Client:
        return httpx.Client(
            transport=httpx.HTTPTransport(uds=str(self.cwd / "run" / "http.sock")),
            base_url="http://localhost",
            timeout=COMMAND_TIMEOUT_S,
        )


@contextmanager
def serving(cwd: Path, serve: str, links: dict[Path, Path]) -> Iterator[Service]:
    """``serve`` (a README serve line) run in ``cwd``, shaped like the checkout:
    each ``links`` key (a path the README names) links to its bundle."""
    for name, target in links.items():
        (cwd / name).parent.mkdir(parents=True, exist_ok=True)
        (cwd / name).symlink_to(target)
    # "with .venv/bin on PATH": where this interpreter's `hexvoice` lives.
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": os.pathsep.join([bin_dir, os.environ["PATH"]])}
    notify = NotifySink(cwd / "notify.sock")
    log = cwd / "serve.log"
    proc = subprocess.Popen(
        shlex.split(serve),
        cwd=cwd,
        env={**env, "NOTIFY_SOCKET": str(notify.path)},
        stdout=subprocess.DEVNULL,
        stderr=open(log, "wb"),  # noqa: SIM115 - the child owns it
    )
    try:
        notify.wait_for("READY=1", START_TIMEOUT_S)
        yield Service(cwd, proc, log, env)
    finally:
        notify.close()
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # the README's Ctrl-C
        code = proc.wait(30)
    stderr = log.read_text(errors="replace")
    assert code == 0, stderr
    assert "Traceback" not in stderr, stderr
    assert not (cwd / "run" / "wyoming.sock").exists()


@pytest.fixture(scope="module")
def service(
    pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Service]:
    """The README's serve line, started in a directory shaped like the checkout."""
    (serve,) = SERVE
    links = {DEMO_BUNDLE: bundle_dir(pytestconfig, CPU_OPTIONS)}
    with serving(tmp_path_factory.mktemp("readme"), serve, links) as s:
        yield s


def test_readme_usage_block_is_runnable_as_written():
    assert len(SERVE) == 1, COMMANDS
    curls = [c for c in CLIENTS if c.startswith("curl ")]
    # Without --fail-with-body a refused request writes its error JSON into -o.
    assert curls and all("--fail-with-body" in c for c in curls), curls
    for c in CLIENTS:
        assert "DIR" not in c and "[" not in c.split("-d ")[0], c  # no placeholders


@pytest.mark.parametrize("command", CLIENTS, ids=[c[:40] for c in CLIENTS])
def test_readme_command(service: Service, command: str):
    p = service.run_checked(command, RATE, min_seconds=0.3)
    if command.startswith("hexvoice voices"):
        assert VOICE in p.stdout


def test_text_the_voice_cannot_read_is_refused_and_the_service_keeps_serving(
    service: Service,
):
    # hexvoice say through the service: exit 1, the message, no WAV.
    p = service.run(f'hexvoice say "{CHINESE}" -o zh.wav --socket run/wyoming.sock')
    assert p.returncode == 1, p.stderr
    assert "cannot read Han text" in p.stderr and "en-us" in p.stderr, p.stderr
    assert not (service.cwd / "zh.wav").exists()

    # OpenAI HTTP: a 400 with the error envelope.
    body = {"model": "tts-1", "voice": VOICE, "input": CHINESE}
    with service.http() as http:
        r = http.post("/v1/audio/speech", json=body)
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert "cannot read Han text" in error["message"], error
    assert "en-us (Latin script)" in error["message"], error

    # Wyoming: an error event.
    async def wyoming() -> Error:
        async with AsyncClient.from_uri(f"unix://{service.cwd}/run/wyoming.sock") as c:
            await c.write_event(Synthesize(text=CHINESE).event())
            while True:
                e = await asyncio.wait_for(c.read_event(), COMMAND_TIMEOUT_S)
                assert e is not None and e.type != "audio-start", e
                if Error.is_type(e.type):
                    return Error.from_event(e)

    assert "cannot read Han text" in asyncio.run(wyoming()).text

    # In-process say: the same refusal.
    p = service.run(
        f'hexvoice say "{CHINESE}" -o zh.wav --bundle {DEMO_BUNDLE} --backend cpu'
    )
    assert p.returncode == 1 and "cannot read Han text" in p.stderr, p.stderr

    # Part of a text: spoken without it, with a warning naming the languages.
    body["input"] = "Hello 你好 world."
    with service.http() as http:
        r = http.post("/v1/audio/speech", json={**body, "response_format": "wav"})
        assert r.status_code == 200, r.text
        assert http.get("/health").status_code == 200
    assert "skipped Han text '你好': this voice speaks en-us" in service.log.read_text()


#: The speech-recognition section: its shell block, run as written against the
#: tiny Qwen3-ASR bundle linked where the README's build line puts the bundle.
ASR_HEADING = "## Speech recognition (Qwen3-ASR)"
ASR_BUNDLE = Path("bundles/qwen3-asr")


def test_readme_asr_block_runs_as_written(
    pytestconfig: pytest.Config,
    tmp_path_factory: pytest.TempPathFactory,
    tiny_asr_bundle: Path,
):
    text = README.read_text()
    (serve, *clients) = commands_of(fenced(text, ASR_HEADING))
    assert serve.startswith("hexvoice serve ") and str(ASR_BUNDLE) in serve
    build = re.search(r"^    (scripts/build-qwen3-asr .*)$", text, re.M)
    assert build and f"--out {ASR_BUNDLE}" in build[1], "the build line's --out"
    links = {
        DEMO_BUNDLE: bundle_dir(pytestconfig, CPU_OPTIONS),
        ASR_BUNDLE: tiny_asr_bundle,
    }
    with serving(tmp_path_factory.mktemp("readme_asr"), serve, links) as service:
        outputs = {}
        for command in clients:
            p = service.run(command)
            assert p.returncode == 0, f"{command}\n{p.stdout}\n{p.stderr}"
            outputs[command] = p.stdout
            if command.startswith("curl "):
                assert "segments" in json.loads(p.stdout), p.stdout
        # In-process and through the service: the same transcript.
        texts = {
            v for c, v in outputs.items() if c.startswith("hexvoice transcribe")
            and "--format" not in c
        }  # fmt: skip
        assert len(texts) == 1 and texts.pop().strip(), outputs
        # The SDK example, as written.
        example = service.cwd / "example.py"
        example.write_text(fenced(text, ASR_HEADING, "python"))
        p = service.run(f"{sys.executable} {example}")
        assert p.returncode == 0, p.stderr
        assert "transcript.text.done" in p.stdout, p.stdout


#: The Qwen3-TTS section: its shell block, run as written against the tiny
#: bundles linked where the README's build lines put them.
TTS_HEADING = (
    "## Speech synthesis with Qwen3-TTS (ten languages, voices cloned from a clip)"
)
TTS_CUSTOM, TTS_BASE = Path("bundles/qwen3-tts-custom"), Path("bundles/qwen3-tts-base")
TTS_RATE = 24000
#: The README's ``ref.wav``: a clip of "someone speaking", long enough for every
#: x-vector bucket the README promises (3 s and up), at a rate that is not 24 kHz.
REF_SECONDS, REF_RATE = 5.0, 22050


def _ref_clip() -> np.ndarray:
    """A voiced, syllable-paced tone (harmonics of a wandering pitch)."""
    t = np.arange(round(REF_SECONDS * REF_RATE)) / REF_RATE
    f0 = 140 + 25 * np.sin(2 * np.pi * 0.7 * t)
    phase = 2 * np.pi * np.cumsum(f0) / REF_RATE
    voiced = sum(np.sin(k * phase) / k for k in range(1, 8))
    envelope = 0.5 + 0.5 * np.sin(2 * np.pi * 4 * t) ** 2
    return (0.2 * voiced * envelope).astype(np.float32)


def test_readme_tts_block_runs_as_written(
    tmp_path_factory: pytest.TempPathFactory,
    tiny_tts_custom_bundle: Path,
    tiny_tts_base_bundle: Path,
):
    text = README.read_text()
    (serve, *clients) = commands_of(fenced(text, TTS_HEADING))
    assert serve.startswith("hexvoice serve ") and str(TTS_BASE) in serve
    builds = re.findall(r"^    (scripts/build-qwen3-tts .*)$", text, re.M)
    assert [b.rsplit("--out ", 1)[1] for b in builds] == [
        str(TTS_CUSTOM),
        str(TTS_BASE),
    ]
    cwd = tmp_path_factory.mktemp("readme_tts")
    soundfile.write(cwd / "ref.wav", _ref_clip(), REF_RATE)
    links = {TTS_CUSTOM: tiny_tts_custom_bundle, TTS_BASE: tiny_tts_base_bundle}
    with serving(cwd, serve, links) as service:
        for command in clients:
            p = service.run_checked(command, TTS_RATE)
            if command.startswith("hexvoice voices"):
                assert "serena" in p.stdout.split(), p.stdout
            if command.startswith("hexvoice voice list"):
                assert p.stdout.split()[0] == "anna", p.stdout
        # Both clones were stored, then removed; the store directory stays.
        assert (cwd / "voices").is_dir() and not list((cwd / "voices").iterdir())
        with service.http() as http:
            voices = http.get("/v1/audio/voices").json()["voices"]
        assert not any(v["cloned"] for v in voices), voices


#: The GPT-SoVITS zero-shot section: its shell block, run as written against
#: the tiny voice built with the reference graphs (``gsv_clone_voice``), linked
#: where the README's build line puts the bundle.
GSV_HEADING = "### GPT-SoVITS voices from a clip (zero-shot)"
GSV_BUNDLE = Path("bundles/gsv-zero-shot")
GSV_RATE = 32000
#: The README's clips: what the tiny voice itself said, cut to 3.2 s (its
#: prompt then leaves the tiny prefill room for text).
GSV_CLIP_SECONDS, GSV_SPOKEN = 3.2, "你好。你好。"


def _gsv_clips(bundle: Path, cwd: Path) -> None:
    from daemon.sdk.bundles.manifest import Bundle
    from daemon.sdk.local import open_engine
    from daemon.sdk.tts import SynthesisOptions

    n = round(GSV_CLIP_SECONDS * GSV_RATE)
    with open_engine(Bundle.load(bundle), "cpu", warmup=False) as (engine, _):
        for name, seed in (("ref.wav", 3), ("more.wav", 4)):
            opts = SynthesisOptions(seed=seed)
            audio = np.concatenate(
                [c.audio for c in engine.synthesize(GSV_SPOKEN, opts)]
            )
            soundfile.write(cwd / name, audio[:n], GSV_RATE, subtype="PCM_16")


def test_readme_gsv_clone_block_runs_as_written(
    tmp_path_factory: pytest.TempPathFactory, gsv_clone_voice: Path
):
    text = README.read_text()
    (serve, *clients) = commands_of(fenced(text, GSV_HEADING))
    assert serve.startswith("hexvoice serve ") and str(GSV_BUNDLE) in serve
    build = re.search(r"^    (scripts/build-gptsovits .*--hubert .*)$", text, re.M)
    assert build and f"--out {GSV_BUNDLE} " in build[1], "the build line's --out"
    cwd = tmp_path_factory.mktemp("readme_gsv")
    bundle = gsv_clone_voice / "bundle"
    _gsv_clips(bundle, cwd)
    with serving(cwd, serve, {GSV_BUNDLE: bundle}) as service:
        for command in clients:
            p = service.run_checked(command, GSV_RATE)
            if command.startswith("hexvoice voice list"):
                assert [line.split()[0] for line in p.stdout.splitlines()] == [
                    "lan",
                    "mei",
                ], p.stdout
        assert (cwd / "voices").is_dir() and not list((cwd / "voices").iterdir())
