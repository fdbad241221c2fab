"""One loaded ``qwen3-tts`` bundle: its CPU tables and graph drivers.

The engine streams through these parts; the parity tests and benchmarks drive
the same ones (:meth:`Model.prompt`, ``generator.frames`` /
``generator.teacher_forced``, :meth:`Model.greedy`), so they measure the code
the service runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final

import numpy as np

from daemon.engines.qwen3.tts.clone import Cloner, speaker_model_id
from daemon.engines.qwen3.tts.codec.decoder import CodecDecoder
from daemon.engines.qwen3.tts.codec.stream import CodecStream
from daemon.engines.qwen3.tts.frames.generator import Generator
from daemon.engines.qwen3.tts.frames.predictor import Predictor
from daemon.engines.qwen3.tts.frames.talker import GraphTime, Talker
from daemon.engines.qwen3.tts.options import Request
from daemon.engines.qwen3.tts.params import (
    CODEC_EMBEDDING,
    CP_EMBEDDING,
    CP_STEP,
    MEL_BASIS,
    TEXT_EMBEDDING,
    TEXT_PROJ,
    TOKENIZER,
    TtsParams,
)
from daemon.engines.qwen3.tts.text.projection import TextProjection
from daemon.engines.qwen3.tts.text.prompt import Prompt, PromptBuilder
from daemon.sdk.ar.stats import DecodeStats
from daemon.sdk.bundles.manifest import Bundle, BundleError
from daemon.sdk.cancel import CancelToken
from daemon.sdk.tts import SynthesisOptions

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from daemon.sdk.graphs import Runner

#: speech frames a text token may need at most (12.5 frames/s over roughly
#: 3-4 text tokens/s of speech, zh or en): a piece is cut so that its prompt
#: and this many frames per token fit the largest KV bucket
FRAMES_PER_TOKEN: Final = 4


@dataclass
class Model:
    """The parts of one bundle."""

    p: TtsParams
    tokenizer: Tokenizer
    builder: PromptBuilder
    talker: Talker
    predictor: Predictor
    generator: Generator
    codec: CodecDecoder
    cloner: Cloner | None

    @property
    def stats(self) -> DecodeStats:
        """The frames' account (benchmarks, tests): a step is a frame."""
        return self.generator.stats

    def request(self, options: SynthesisOptions | None = None) -> Request:
        """``options`` checked against this bundle (ValueError if refused)."""
        return Request.from_options(options or SynthesisOptions(), self.p)

    def prompt(
        self, text: str, request: Request, cancel: CancelToken | None = None
    ) -> Prompt:
        """``text``'s talker prompt (its text_proj calls follow one check)."""
        if cancel is not None:
            cancel.check()
        return self.builder.build(
            text, request.language, request.speaker, request.xvector, request.text_mode
        )

    def fits(self, text: str, request: Request) -> bool:
        """Whether ``text``'s prompt fits the largest prefill bucket and its
        prompt plus FRAMES_PER_TOKEN frames per text token the largest KV one."""
        n = self.builder.text_tokens(text)
        rows = self.builder.length(
            n, request.text_mode, request.language, request.speaker,
            request.xvector is not None,
        )  # fmt: skip
        return (
            rows <= self.talker.max_prompt
            and rows + FRAMES_PER_TOKEN * n <= self.talker.max_positions
        )

    def greedy(self, text: str, options: SynthesisOptions | None = None) -> np.ndarray:
        """int64 codes [frames, groups] of ``text`` as one utterance, talker and
        predictor greedy (upstream do_sample=False, subtalker_dosample=False)."""
        opts = options or SynthesisOptions()
        request = self.request(replace(opts, extra={**opts.extra, "greedy": True}))
        frames = list(self.generator.frames(self.prompt(text, request), request))
        g = self.p.predictor.groups
        return np.array(frames, np.int64).reshape(-1, g)

    def warmup(self, text: str, frames: int) -> None:
        self.talker.warmup()
        speaker = next(iter(self.p.speakers), None)
        options = SynthesisOptions(
            speaker=speaker, extra={"greedy": True, "max_new_tokens": frames + 1}
        )
        request = Request.from_options(options, self.p)
        codes = list(self.generator.frames(self.prompt(text, request), request))
        for size in self.codec.sizes:
            self.codec.decode(np.zeros((1, self.p.predictor.groups), np.int64), size)
        if codes:
            stream = CodecStream(self.p, self.codec, "streaming")
            stream.push(np.array(codes))
            stream.finish()
        if self.cloner is not None:
            xv = self.cloner.xvector
            for f in xv.buckets:  # a quiet mel: ln(1e-5), upstream's clamp floor
                xv.embed_mel(np.full((f, xv.x.n_mels), np.log(1e-5), np.float32))


def _table(bundle: Bundle, name: str, shape: tuple[int, ...]) -> np.ndarray:
    table = np.load(bundle.path(name), mmap_mode="r")
    if table.shape != shape:
        raise BundleError(
            f"{bundle.root}: {name} is {list(table.shape)}, params say {list(shape)}"
        )
    # a plain ndarray view of the mapping: indexing an np.memmap builds a memmap
    # object per row, a measurable cost at 17 table rows a frame
    return np.asarray(table)


def load_model(bundle: Bundle, p: TtsParams, graphs: Mapping[str, Runner]) -> Model:
    from tokenizers import Tokenizer

    t, d = p.talker, p.predictor
    text = _table(bundle, TEXT_EMBEDDING, (p.text.vocab, p.text.hidden))
    codec = _table(bundle, CODEC_EMBEDDING, (t.vocab, t.hidden))
    cp = _table(bundle, CP_EMBEDDING, (d.groups - 1, d.vocab, t.hidden))
    tokenizer = Tokenizer.from_file(str(bundle.path(TOKENIZER)))
    project = TextProjection(p, graphs[TEXT_PROJ])
    try:
        builder = PromptBuilder(p, tokenizer, text, codec, project)
    except ValueError as exc:
        raise BundleError(f"{bundle.root}: {exc}") from None
    time = GraphTime()
    talker = Talker(p, graphs, time)
    predictor = Predictor(p, graphs[CP_STEP], codec, cp, time)
    cloner = None
    if p.xvector is not None:
        basis = np.load(bundle.path(MEL_BASIS))
        cloner = Cloner(p, graphs, basis, speaker_model_id(p, bundle.graphs))
    return Model(
        p=p,
        tokenizer=tokenizer,
        builder=builder,
        talker=talker,
        predictor=predictor,
        generator=Generator(p, talker, predictor),
        codec=CodecDecoder(p, graphs),
        cloner=cloner,
    )
