"""Per-request settings of the ``qwen3-tts`` engine, checked before any graph runs.

``SynthesisOptions``: ``voice`` / ``speaker`` name a CustomVoice speaker (the
bundle's voices are its speakers); ``voice_print`` is a Base clone's x-vector;
``language`` is a code ("zh", "en_US") or upstream's name in any case
("Chinese"); None is upstream's "auto"; ``seed`` seeds the request's generator.
``extra`` may carry ``text_mode`` ("non_streaming" | "streaming"; default the
bundle's, upstream's per checkpoint kind), ``greedy`` (talker and predictor
argmax, as the parity tests run), ``max_new_tokens`` (code0s, at most the
bundle's) and upstream's generate knobs (``do_sample``, ``top_k``, ``top_p``,
``temperature``, ``repetition_penalty``, ``subtalker_*``), which override the
bundle's generation_config.json values.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Annotated, Literal

import msgspec
import numpy as np

from daemon.config.reader import read
from daemon.engines.qwen3.common.options import check_finite, max_new_tokens
from daemon.engines.qwen3.tts.params import ENGINE_ID, TtsParams
from daemon.engines.qwen3.tts.text.prompt import AUTO, TextMode
from daemon.sdk.tts import SynthesisOptions
from daemon.text.languages import LANGUAGE_CODES

Positive = Annotated[float, msgspec.Meta(gt=0)]
Probability = Annotated[float, msgspec.Meta(gt=0, le=1)]
Count = Annotated[int, msgspec.Meta(ge=0)]
#: the x-vector's key in a qwen3-tts VoicePrint (clone.py writes it)
XVECTOR_KEY = "xvector"


class Extra(msgspec.Struct, frozen=True):
    """The ``SynthesisOptions.extra`` keys this engine understands."""

    text_mode: Literal["non_streaming", "streaming"] | None = None
    greedy: bool | None = None
    max_new_tokens: Annotated[int, msgspec.Meta(ge=1)] | None = None
    do_sample: bool | None = None
    top_k: Count | None = None
    top_p: Probability | None = None
    temperature: Positive | None = None
    repetition_penalty: Positive | None = None
    subtalker_do_sample: bool | None = None
    subtalker_top_k: Count | None = None
    subtalker_top_p: Probability | None = None
    subtalker_temperature: Positive | None = None

    def __post_init__(self) -> None:
        check_finite(
            self, ("temperature", "repetition_penalty", "subtalker_temperature")
        )


@dataclass(frozen=True)
class Settings:
    """The sampling knobs of one request (params.sampling with overrides)."""

    do_sample: bool
    top_k: int
    top_p: float
    temperature: float
    repetition_penalty: float
    min_new_tokens: int
    subtalker_do_sample: bool
    subtalker_top_k: int
    subtalker_top_p: float
    subtalker_temperature: float
    suppress: tuple[int, int]


def language_name(hint: str | None, p: TtsParams) -> str:
    """upstream's language key for a hint: a code or a name in any case;
    "auto" for None; ValueError naming the advertised ones otherwise."""
    if hint is None or not hint.strip() or hint.strip().lower() == AUTO:
        return AUTO
    s = hint.strip()
    family = s.replace("-", "_").split("_")[0].lower()
    name = (LANGUAGE_CODES.get(family) or s).lower()
    if name not in p.advertised_languages:
        raise ValueError(
            f"{ENGINE_ID}: unsupported language {hint!r}; supported: "
            f"{', '.join(p.advertised_languages)}"
        )
    return name


@dataclass(frozen=True)
class Request:
    """One synthesis request's settings, checked."""

    language: str  # upstream's key ("chinese") or "auto"
    speaker: str | None  # a CustomVoice speaker (config name)
    xvector: np.ndarray | None  # a Base clone's x-vector, float32 [D]
    text_mode: TextMode
    max_new_tokens: int
    sampling: Settings
    seed: int | None

    @classmethod
    def from_options(cls, options: SynthesisOptions, p: TtsParams) -> Request:
        """ValueError for an option this engine refuses (before any graph call)."""
        extra = read(dict(options.extra), Extra, where=ENGINE_ID, error=ValueError)
        s = p.sampling
        max_new = max_new_tokens(ENGINE_ID, extra.max_new_tokens, s.max_new_tokens)
        knobs = {
            f.name: getattr(s, f.name) if getattr(extra, f.name, None) is None
            else getattr(extra, f.name)
            for f in dataclasses.fields(Settings)
        }  # fmt: skip
        if extra.greedy:
            knobs.update(do_sample=False, subtalker_do_sample=False)
        return cls(
            language=language_name(options.language, p),
            speaker=_speaker(options, p),
            xvector=_xvector(options, p),
            text_mode=extra.text_mode or p.text_mode,
            max_new_tokens=max_new,
            sampling=Settings(**knobs),
            seed=options.seed,
        )


def _speaker(options: SynthesisOptions, p: TtsParams) -> str | None:
    if p.kind == "base":
        if options.speaker:
            raise ValueError(
                f"{ENGINE_ID}: a Base bundle has no speakers "
                f"(asked for {options.speaker!r}); clone a voice instead"
            )
        return None
    if options.voice_print is not None:
        raise ValueError(
            f"{ENGINE_ID}: a CustomVoice bundle speaks with its own speakers, "
            "not cloned voices (clone with a Base bundle)"
        )
    for name in (options.speaker, options.voice):
        if name:
            for known in (name, name.lower()):
                if known in p.speakers:
                    return known
            if name is options.speaker:
                raise ValueError(
                    f"{ENGINE_ID}: unknown speaker {name!r}; "
                    f"known: {', '.join(p.speakers)}"
                )
    return next(iter(p.speakers))


def _xvector(options: SynthesisOptions, p: TtsParams) -> np.ndarray | None:
    vp = options.voice_print
    if vp is None or p.kind != "base":
        return None
    if vp.engine_id != ENGINE_ID or XVECTOR_KEY not in vp.arrays:
        raise ValueError(
            f"{ENGINE_ID}: the cloned voice was made by {vp.engine_id!r} "
            f"(arrays {sorted(vp.arrays)}), not by a {ENGINE_ID} Base bundle"
        )
    x = np.asarray(vp.arrays[XVECTOR_KEY], np.float32).reshape(-1)
    if x.shape != (p.talker.hidden,) or not np.isfinite(x).all():
        raise ValueError(
            f"{ENGINE_ID}: the cloned voice's x-vector has shape "
            f"{list(np.shape(vp.arrays[XVECTOR_KEY]))}, this bundle needs "
            f"[{p.talker.hidden}] finite floats"
        )
    return x
