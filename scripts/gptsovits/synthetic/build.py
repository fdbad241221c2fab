"""``scripts/tiny-gptsovits --out DIR``: the synthetic voice, built end to end.

Writes a tiny random-weight GPT-SoVITS v2Pro installation (make_test_voice.py)
and runs the real pipeline (build_voice.py, ``--shapes tiny``) on it. Output
layout (stable; the engine's tests use it)::

    DIR/bundle/        the voice bundle (voice.yaml, graphs/, onnx/, cpu/, refs/, text/)
    DIR/bundle.tar     the same, packed
    DIR/source/        the fake upstream installation (logs/tinyvoice/, weights,
                       pretrained/ tiny BERT + g2pW; with --zero-shot also
                       pretrained/chinese-hubert-base/ and pretrained/sv/)
    DIR/work/          pipeline work dir (state.json, onnx, binaries)
    DIR/qnn-cache/     content-keyed compile cache
    DIR/KEY            content key of the build; a matching key skips everything
    DIR/lock           held while building (concurrent callers wait)

The key covers the pipeline's and the test voice's sources, the target and the
QNN SDK version, so a test session reuses a bundle built by unchanged code.
``--zero-shot`` builds the voice with a tiny HuBERT and a tiny ERes2NetV2 (the
four reference graphs: the bundle makes voices from a clip).
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from scripts.common.qnn_compile import TARGETS, qnn_sdk_version
from scripts.common.steps import code_hash
from scripts.gptsovits.pipeline.build_voice import (
    CODE_ROOTS,
    BuildOptions,
    build,
    summary,
)
from scripts.gptsovits.synthetic.voice import SyntheticVoice, voice_at, write_test_voice

VOICE = "tinyvoice"
KEY_FILE = "KEY"
LOCK_FILE = "lock"


HUBERT_SUBDIR = "pretrained/chinese-hubert-base"
SV_FILE = "pretrained/sv/pretrained_eres2netv2w24s4ep4.ckpt"


def content_key(target: str, zero_shot: bool = False) -> str:
    h = hashlib.sha256(code_hash(CODE_ROOTS).encode())
    h.update(f"{target}|{qnn_sdk_version()}".encode())
    if zero_shot:
        h.update(b"|zero-shot")
    return h.hexdigest()


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One builder per output dir (test sessions of several engineers or xdist
    workers share it); the others wait and then find the build done."""
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def make_test_voice(
    out: Path,
    target: str = "simulator",
    sim_gates: bool = True,
    zero_shot: bool = False,
) -> Path:
    """Build (or reuse) the test voice under `out`; returns the bundle dir.

    A build without simulator gates satisfies later calls without them; a call
    with them on such a build only runs the gates (every other step is resumed).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    bundle, key_file = out / "bundle", out / KEY_FILE
    with _locked(out / LOCK_FILE):
        key = content_key(target, zero_shot)
        have = key_file.read_text().split() if key_file.is_file() else []
        done = (
            have[:1] == [key]
            and (not sim_gates or "sim=1" in have)
            and (bundle / "voice.yaml").is_file()
            and (out / "bundle.tar").is_file()
        )
        if done:
            print(f"test voice up to date: {bundle}", file=sys.stderr)
            return bundle
        start = time.monotonic()
        source_key = out / "source" / KEY_FILE
        if not source_key.is_file() or source_key.read_text().strip() != key:
            shutil.rmtree(out / "source", ignore_errors=True)
            write_test_voice(out / "source", exp=VOICE)
            if zero_shot:
                _write_reference_models(out / "source")
            source_key.write_text(key + "\n")
        key_file.unlink(missing_ok=True)
        opts = options(voice_at(out / "source", VOICE), out, target, sim_gates)
        if zero_shot:
            src = out / "source"
            opts = replace(opts, hubert=src / HUBERT_SUBDIR, sv=src / SV_FILE)
        report = build(opts)
        print(summary(report))
        key_file.write_text(f"{key} sim={int(sim_gates)}\n")
        print(f"test voice built in {time.monotonic() - start:.0f} s", file=sys.stderr)
    return bundle


def _write_reference_models(root: Path) -> None:
    """The tiny HuBERT and ERes2NetV2 an upstream installation would hold."""
    from scripts.gptsovits.synthetic.hubert import write_tiny_hubert
    from scripts.gptsovits.synthetic.sv import write_tiny_sv

    write_tiny_hubert(root / HUBERT_SUBDIR)
    write_tiny_sv(root / SV_FILE)


def options(
    voice: SyntheticVoice, out: Path, target: str, sim_gates: bool = True
) -> BuildOptions:
    return BuildOptions(
        logs=voice.logs_dir,
        gpt_epoch=voice.gpt_epoch,
        sovits_epoch=voice.sovits_epoch,
        ref=voice.ref_clip,
        target=target,
        out=out / "bundle",
        bert=voice.bert_dir,
        g2pw=voice.g2pw_dir,
        voice=VOICE,
        work=out / "work",
        shapes="tiny",
        qnn_cache=out / "qnn-cache",
        sim_gates=sim_gates,
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="scripts/tiny-gptsovits", description=__doc__)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--target", choices=sorted(TARGETS), default="simulator")
    p.add_argument("--no-sim-gates", action="store_true")
    p.add_argument(
        "--zero-shot", action="store_true", help="with the four reference graphs"
    )
    a = p.parse_args(argv)
    import logging

    logging.basicConfig(level=logging.INFO, format="  %(message)s", stream=sys.stderr)
    bundle = make_test_voice(a.out, a.target, not a.no_sim_gates, a.zero_shot)
    print(bundle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
