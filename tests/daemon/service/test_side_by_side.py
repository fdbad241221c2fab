"""ASR and TTS bundles load side by side in one service, and only the engines
the config names are loaded: no other engine's module is even imported (a
fresh process loads the config with the real host, then lists the engine
modules it imported)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.daemon.conftest import ROOT
from tests.daemon.vad_engine import write_bundle

#: Every engine module the service could load, by engine id.
ENGINE_MODULES = {
    "test-tone": "tests.daemon.tone_engine",
    "test-vad": "tests.daemon.vad_engine",
    "piper": "daemon.engines.piper",
    "gpt-sovits": "daemon.engines.gptsovits",
    "qwen3-asr": "daemon.engines.qwen3.asr",
    "qwen3-tts": "daemon.engines.qwen3.tts",
}
_PROBE = """
import asyncio, json, sys
from daemon.service.config_file import load_config
from daemon.service.host import EngineHost
from daemon.service.edge.metrics import Metrics

async def main():
    cfg = load_config(sys.argv[1])
    host = EngineHost(cfg, Metrics())
    await host.load(cfg)
    tasks = {name: v.task for name, v in host.voices.items()}
    await host.close()
    return tasks

tasks = asyncio.run(main())
modules = sorted(m for m in sys.modules if m.startswith(tuple(json.loads(sys.argv[2]))))
print(json.dumps({"tasks": tasks, "modules": modules}))
"""


def _probe(config, env):  # noqa: ANN001, ANN202
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _PROBE,
            str(config),
            json.dumps(list(ENGINE_MODULES.values())),
        ],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def _imported(modules: list[str]) -> set[str]:
    return {
        e
        for e, m in ENGINE_MODULES.items()
        if any(x == m or x.startswith(m + ".") for x in modules)
    }


@pytest.mark.parametrize("with_asr", [True, False], ids=["tts+asr", "tts only"])
def test_only_the_engines_the_config_names_are_loaded(
    test_voice, bins, onnx_dir, tmp_path, with_asr
):
    from tests.daemon.conftest import write_config

    voice = test_voice
    bundles = [{"bundle": str(voice.bundle)}]
    if with_asr:
        mm = bins["matmul_tanh"].bin_path
        vad = write_bundle(tmp_path / "vad", mm, onnx_dir / "matmul_tanh.onnx")
        bundles.append({"bundle": str(vad)})
    config = write_config(tmp_path / "config.yaml", voice, tmp_path, voices=bundles)
    seen = _probe(config, voice.env)
    expected = {"tone": "tts", "vad": "asr"} if with_asr else {"tone": "tts"}
    assert seen["tasks"] == expected
    loaded = {"test-tone", "test-vad"} if with_asr else {"test-tone"}
    assert _imported(seen["modules"]) == loaded
