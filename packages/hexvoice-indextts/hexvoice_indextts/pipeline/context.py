"""What one build reads and where it writes: the options (model directory,
hub cache, buckets, target, the accepted licence), the checked model
directory, the work dir (scripts/common/build/workdir.py) and the graph names
the buckets make."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from scripts.common.build.workdir import WorkDir

from hexvoice_indextts.layout import (
    UtteranceBuckets,
    VoiceBuckets,
    bucket_sizes,
    graph_names,
)
from hexvoice_indextts.model_dir import ModelDir

TARGETS: Final = ("simulator", "qcs8550")
Language = Literal["auto", "en", "zh"]

#: Released-model buckets.  Prompt rows: 34 conditioning rows + a segment's
#: text (at most 120 pieces) + 3; K/V positions and latent rows: a prompt plus
#: up to 1500 codes (infer's max_mel_tokens); mel frames: 1.72 per code, and
#: the 15 s prompt's 1292 frames before them in the DiT; BigVGAN windows
#: overlap by its receptive field (39.8 frames, 40).
UTTERANCE_BUCKETS: Final = UtteranceBuckets(
    prefill=(96, 160), decode=(256, 512, 1024, 1792), latent=(256, 512, 1024, 1792),
    regulator=(128, 256, 512, 1024, 2048, 2600), dit=(512, 1024, 2048, 3900),
    vocoder=(64, 160), overlap=40,
)  # fmt: skip
#: a 15 s clip: 750 w2v-BERT rows, 1500 fbank frames, 1292 mel frames
VOICE_BUCKETS: Final = VoiceBuckets(
    rows=(128, 256, 512, 752), fbank=(256, 512, 1024, 1504), mel=(256, 512, 1024, 1296),
)  # fmt: skip


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class BuildOptions:
    model: Path
    #: the Hugging Face hub cache holding the shared models (HF_HOME/hub)
    hub: Path
    out: Path
    target: str = "simulator"
    work: Path | None = None
    qnn_cache: Path | None = None
    utterance_buckets: UtteranceBuckets = UTTERANCE_BUCKETS
    voice_buckets: VoiceBuckets = VOICE_BUCKETS
    #: the text normaliser's grammars the bundle carries ("auto": en and zh)
    language: Language = "auto"
    #: a NeMo grammar cache of the same nemo-text-processing version to start
    #: from (upstream's, for one): its archives are copied, not compiled again
    grammars: Path | None = None
    #: simulator gates: None runs them for --target simulator only
    sim_gates: bool | None = None
    name: str = "indextts2"

    @property
    def work_dir(self) -> Path:
        return Path(self.work or self.out.with_name(self.out.name + ".work"))

    @property
    def run_sim_gates(self) -> bool:
        return self.target == "simulator" if self.sim_gates is None else self.sim_gates

    def validate(self) -> None:
        if self.target not in TARGETS:
            raise ValueError(
                f"--target: expected one of {TARGETS}, found {self.target!r}"
            )
        for what, sizes in (
            *(
                (f"utterance {k}", v)
                for k, v in bucket_sizes(self.utterance_buckets).items()
            ),
            *((f"voice {k}", v) for k, v in bucket_sizes(self.voice_buckets).items()),
        ):
            if not sizes or min(sizes) < 1 or len(set(sizes)) != len(sizes):
                raise ValueError(f"{what} buckets: expected distinct sizes >= 1, "
                                 f"found {list(sizes)}")  # fmt: skip


@dataclass(frozen=True)
class BuildContext:
    opts: BuildOptions
    md: ModelDir
    accepted: str  # the licence id the user accepted
    log: Callable[[str], None] = field(default=_stderr)

    @property
    def work(self) -> WorkDir:
        return WorkDir(self.opts.work_dir)

    @property
    def graph_keys(self) -> tuple[str, ...]:
        return graph_names(self.opts.utterance_buckets, self.opts.voice_buckets)
