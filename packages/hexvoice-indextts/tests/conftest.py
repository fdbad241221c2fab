"""The tiny model, written once per session: two seeds (so tests can tell
models apart) and one speaker clip; then upstream's runs on them. Upstream
reads its hub location when huggingface_hub is imported, so every upstream
call runs in a subprocess (oracle.run) with that model's HF_HOME. The three
runs go side by side, one torch thread each: about half of each is importing
upstream, on one core, and two threads each would oversubscribe the cores
(measured on 2 cores: 62 s for the package's tests, against 85 s one run after
another with torch's default threads and 95 s side by side with them)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from hexvoice_indextts.engine.engine import IndexTtsEngine
from hexvoice_indextts.engine.params import LICENSE
from hexvoice_indextts.layout import UtteranceBuckets, VoiceBuckets
from hexvoice_indextts.oracle.run import infer_int16_runs, write_clip
from hexvoice_indextts.pipeline.build import Built, build
from hexvoice_indextts.pipeline.context import BuildOptions
from hexvoice_indextts.segment import SegmentGraphs
from hexvoice_indextts.tiny.model import TinyDirs, write_tiny
from hexvoice_indextts.voice.maker import EmotionMatrices, VoiceMaker

#: The seeds of the two tiny models; upstream's runs are all seeded with SEED.
SEED: int = 0
OTHER_SEED: int = 1
#: Torch threads per upstream run (see above).
THREADS: int = 1
#: A text of four segments at MULTI_PIECES pieces per segment (with the tiny
#: BPE: 13, 9, 12 and 12 pieces), through NeMo's numbers and contractions.
MULTI_TEXT: str = "It's 3 pm. The quick brown fox, 42 cats! Yes - they did?"
MULTI_PIECES: int = 16
#: The tiny model's buckets: a segment of MULTI_TEXT fits them (the DiT's
#: 128 frames hold the clip's 71 prompt frames and a capped segment's 39).
BUCKETS = UtteranceBuckets(
    prefill=(64,), decode=(96,), latent=(96,), regulator=(48,), dit=(96, 128),
    vocoder=(40,), overlap=15,
)  # fmt: skip
#: buckets that hold the clip: 41 w2v-BERT rows, 82 fbank frames, 71 mel frames
VOICE_BUCKETS = VoiceBuckets(rows=(48,), fbank=(96,), mel=(80,))


@dataclass(frozen=True)
class Runs:
    """Upstream's outputs: ``first`` and ``again`` from one process (one load,
    two infers), the config keys it read while loading; ``elsewhere`` the same
    model and seed in another process; ``other`` the OTHER_SEED model."""

    rate: int
    first: np.ndarray
    again: np.ndarray
    config_reads: frozenset[str]
    elsewhere: np.ndarray
    other: np.ndarray
    #: what upstream computed on the way to ``first`` (oracle/trace.py)
    trace: dict[str, np.ndarray]
    #: MULTI_TEXT in the same process, seeded as ``first``
    multi: np.ndarray
    multi_text: str = MULTI_TEXT
    multi_pieces: int = MULTI_PIECES


@pytest.fixture(scope="session")
def tiny(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[TinyDirs, TinyDirs]]:
    """The SEED and OTHER_SEED tiny models, about 700 MB each (w2v-BERT keeps
    its real width and depth); pytest keeps the last three sessions' tmp dirs,
    so they go when the session ends."""
    pair = (
        write_tiny(tmp_path_factory.mktemp("tiny"), seed=SEED),
        write_tiny(tmp_path_factory.mktemp("tiny-other"), seed=OTHER_SEED),
    )
    yield pair
    for dirs in pair:
        shutil.rmtree(dirs.model.parent, ignore_errors=True)


@pytest.fixture(scope="session")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_clip(tmp_path_factory.mktemp("clip") / "speaker.wav")


@pytest.fixture(scope="session")
def runs(
    tiny: tuple[TinyDirs, TinyDirs],
    clip: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Runs:
    first, other = tiny
    tmp = tmp_path_factory.mktemp("runs")
    reads = tmp / "reads.json"
    trace: dict[str, np.ndarray] = {}
    with ThreadPoolExecutor(max_workers=3) as pool:
        main = pool.submit(
            infer_int16_runs,
            first.model,
            first.hf_home,
            clip,
            seed=SEED,
            repeat=2,
            config_reads=reads,
            threads=THREADS,
            trace=trace,
            more=(MULTI_TEXT,),
            segment_pieces=MULTI_PIECES,
        )
        elsewhere = pool.submit(
            infer_int16_runs,
            first.model,
            first.hf_home,
            clip,
            seed=SEED,
            threads=THREADS,
        )
        others = pool.submit(
            infer_int16_runs,
            other.model,
            other.hf_home,
            clip,
            seed=SEED,
            threads=THREADS,
        )
        rate, (first, again, multi) = main.result()
        rate_elsewhere, (wav_elsewhere,) = elsewhere.result()
        rate_other, (wav_other,) = others.result()
    assert rate_elsewhere == rate_other == rate
    return Runs(
        rate,
        first,
        again,
        frozenset(json.loads(reads.read_text())),
        wav_elsewhere,
        wav_other,
        trace,
        multi,
    )


@pytest.fixture(scope="session")
def bundle(
    tiny: tuple[TinyDirs, TinyDirs], tmp_path_factory: pytest.TempPathFactory
) -> Built:
    """The SEED model built by the package's own build (pipeline/build.py) in
    BUCKETS and VOICE_BUCKETS, for the simulator without its gates (the
    pipeline tests run those), English text as the oracle speaks it, NeMo's
    grammars taken from upstream's cache (the same nemo version)."""
    import indextts.utils.front as front

    dirs, out = tiny[0], tmp_path_factory.mktemp("bundle")
    opts = BuildOptions(
        dirs.model, dirs.hf_home / "hub", out / "bundle", "simulator",
        utterance_buckets=BUCKETS, voice_buckets=VOICE_BUCKETS, language="en",
        grammars=Path(front.__file__).parent / "nemo_cache", sim_gates=False,
    )  # fmt: skip
    return build(opts, [LICENSE.id], log=lambda _: None)


@pytest.fixture(scope="session")
def engine(bundle: Built) -> Iterator[IndexTtsEngine]:
    """The bundle loaded by the engine on onnxruntime CPU."""
    from daemon.sdk.local import open_engine

    with open_engine(bundle.bundle, "cpu", accept_licenses=[LICENSE.id]) as local:
        yield local.engine  # type: ignore[misc]


@dataclass(frozen=True)
class CpuModel:
    """What the loaded engine runs: its graphs and tables, as the bundle
    holds them."""

    segment: SegmentGraphs
    voices: VoiceMaker
    matrices: EmotionMatrices


@pytest.fixture(scope="session")
def cpu_model(engine: IndexTtsEngine) -> CpuModel:
    m = engine.model
    return CpuModel(m.utterance.segment.g, m.cloner.maker, m.matrices)


@pytest.fixture(scope="session")
def cpu_graphs(cpu_model: CpuModel) -> SegmentGraphs:
    return cpu_model.segment
