"""``scripts/tiny-gptsovits --out DIR``: the synthetic voice, built end to end.

Writes a tiny random-weight GPT-SoVITS v2Pro installation (voice.py) and runs
the real build (scripts/gptsovits/build.py, ``--shapes tiny``) on it, once per
content key, in the builds' one bundle cache (scripts/common/build/cache.py)::

    DIR/<key>/bundle/      the voice bundle (voice.yaml, graphs/, onnx/, cpu/, refs/,
                           text/)
    DIR/<key>/bundle.tar   the same, packed
    DIR/<key>/source/      the fake upstream installation (logs/tinyvoice/, weights,
                           pretrained/ tiny BERT + g2pW; with --zero-shot also
                           pretrained/chinese-hubert-base/ and pretrained/sv/)
    DIR/<key>/work/        the build's work dir (state.json, onnx, binaries)
    DIR/<key>/DONE         the build finished; GATED: its simulator gates ran too
    DIR/qnn-cache/         content-keyed compile cache, shared by the keys
    DIR/lock               held while building (concurrent callers wait)

The key covers the code this module can run (the build's and the synthetic
voice's), the target, ``--zero-shot`` and the onnxruntime / QNN versions, so a
test session reuses a bundle built by unchanged code.  The simulator gates
change no file of the bundle, so they are no part of the key: a build without
them satisfies later calls without them, and a call with them on such a build
runs only the gates (every other stage is resumed).  ``--zero-shot`` builds the
voice with a tiny HuBERT and a tiny ERes2NetV2 (the four reference graphs: the
bundle makes voices from a clip).
"""

from __future__ import annotations

import argparse
import logging
import shutil
import sys
import time
from pathlib import Path
from typing import Final

from scripts.common.build.cache import cached_build, content_key, locked
from scripts.common.qnn_compile import TARGETS
from scripts.gptsovits.build import BuildOptions, Built, build, summary
from scripts.gptsovits.synthetic.voice import SyntheticVoice, voice_at, write_test_voice

#: this module, by name (as ``python -m`` it runs as ``__main__``)
MODULE: Final = "scripts.gptsovits.synthetic.build"
VOICE: Final = "tinyvoice"
SOURCE: Final = "source"
GATED: Final = "GATED"
LOCK: Final = "lock"
QNN_CACHE: Final = "qnn-cache"
HUBERT_SUBDIR: Final = "pretrained/chinese-hubert-base"
SV_FILE: Final = "pretrained/sv/pretrained_eres2netv2w24s4ep4.ckpt"


def tiny_key(target: str, zero_shot: bool = False) -> str:
    """The content key of the test voice built for ``target``."""
    return content_key([MODULE], [], {"target": target, "zero_shot": zero_shot})


def make_test_voice(
    root: Path,
    target: str = "simulator",
    sim_gates: bool = True,
    zero_shot: bool = False,
) -> Path:
    """Build (or reuse) the test voice under ``root``; returns its bundle dir
    (its parent holds ``source/`` and ``work/``)."""
    root = Path(root)

    def make(out: Path, work: Path) -> Built:
        return _build(root, out, work, target, sim_gates, zero_shot)

    bundle, _ = cached_build(root, tiny_key(target, zero_shot), make)
    if sim_gates and not (bundle.parent / GATED).is_file():
        with locked(root / LOCK):
            if not (bundle.parent / GATED).is_file():
                _build(root, bundle, bundle.parent / "work", target, True, zero_shot)
    print(f"test voice: {bundle}", file=sys.stderr)
    return bundle


def _build(
    root: Path, out: Path, work: Path, target: str, sim_gates: bool, zero_shot: bool
) -> Built:
    start = time.monotonic()
    source = source_at(out.parent, zero_shot)
    built = build(options(voice_at(source, VOICE), out, work, target, sim_gates, root))
    print(summary(built))
    if sim_gates:
        (out.parent / GATED).write_text("")
    print(f"test voice built in {time.monotonic() - start:.0f} s", file=sys.stderr)
    return built


def source_at(base: Path, zero_shot: bool) -> Path:
    """``base/source``, written if missing (atomically: a half-written one
    never counts)."""
    source = base / SOURCE
    if not source.is_dir():
        part = base / f"{SOURCE}.part"
        shutil.rmtree(part, ignore_errors=True)
        write_test_voice(part, exp=VOICE)
        if zero_shot:
            _write_reference_models(part)
        part.replace(source)
    return source


def _write_reference_models(root: Path) -> None:
    """The tiny HuBERT and ERes2NetV2 an upstream installation would hold."""
    from scripts.gptsovits.synthetic.hubert import write_tiny_hubert
    from scripts.gptsovits.synthetic.sv import write_tiny_sv

    write_tiny_hubert(root / HUBERT_SUBDIR)
    write_tiny_sv(root / SV_FILE)


def options(
    voice: SyntheticVoice,
    out: Path,
    work: Path,
    target: str,
    sim_gates: bool = True,
    root: Path | None = None,
) -> BuildOptions:
    """The build of the test voice in ``voice``'s installation (``root``: the
    cache whose compile cache it shares)."""
    hubert, sv = voice.root / HUBERT_SUBDIR, voice.root / SV_FILE
    zero_shot = hubert.is_dir() and sv.is_file()
    return BuildOptions(
        logs=voice.logs_dir,
        gpt_epoch=voice.gpt_epoch,
        sovits_epoch=voice.sovits_epoch,
        ref=voice.ref_clip,
        target=target,
        out=out,
        bert=voice.bert_dir,
        g2pw=voice.g2pw_dir,
        voice=VOICE,
        work=work,
        shapes="tiny",
        qnn_cache=(root or out.parent.parent) / QNN_CACHE,
        sim_gates=sim_gates,
        hubert=hubert if zero_shot else None,
        sv=sv if zero_shot else None,
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
    logging.basicConfig(level=logging.INFO, format="  %(message)s", stream=sys.stderr)
    bundle = make_test_voice(a.out, a.target, not a.no_sim_gates, a.zero_shot)
    print(bundle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
