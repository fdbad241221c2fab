"""What one request asks of the engine beyond the text: the cloned voice
(required: IndexTTS-2 has no voices of its own) and the emotion knobs of
infer_v2's ``infer``, read from ``SynthesisOptions.extra`` with the typed
reader (a ValueError naming the field, which the service answers as a 400):

- ``emo_alpha`` (0..1): how much of the emotion reference to mix in, or how
  strongly to apply ``emo_vector``;
- ``emo_vector``: eight weights, upstream's order (happy, angry, sad, afraid,
  disgusted, melancholic, surprised, calm), each 0..1;
- ``max_mel_tokens``: infer's cap on a segment's codes (default 1500), cut
  further to what the bundle's graphs hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Final

import msgspec
from daemon.config.reader import read
from daemon.sdk.tts import SynthesisOptions

from hexvoice_indextts.engine.clone import voice_of
from hexvoice_indextts.gpt.generate import Sampling
from hexvoice_indextts.layout import ENGINE_ID
from hexvoice_indextts.model_dir import EMOTIONS
from hexvoice_indextts.voice.maker import Voice

Unit = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
#: infer's default emo_alpha
EMO_ALPHA: Final = 1.0


class Extra(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    emo_alpha: Unit = EMO_ALPHA
    max_mel_tokens: Annotated[int, msgspec.Meta(ge=1)] | None = None
    emo_vector: (
        Annotated[list[Unit], msgspec.Meta(min_length=EMOTIONS, max_length=EMOTIONS)]
        | None
    ) = None


@dataclass(frozen=True)
class Request:
    voice: Voice
    emo_alpha: float
    emo_vector: Sequence[float] | None
    seed: int | None
    sampling: Sampling

    @classmethod
    def from_options(cls, options: SynthesisOptions) -> Request:
        if options.voice_print is None:
            raise ValueError(
                f"{ENGINE_ID}: IndexTTS-2 speaks only in cloned voices: register "
                "one (POST /v1/voices, hexvoice voice add) and speak with its name"
            )
        if options.speed != 1.0:
            raise ValueError(f"{ENGINE_ID}: speed {options.speed} is not adjustable")
        extra = read(dict(options.extra), Extra, where=ENGINE_ID, error=ValueError)
        sampling = Sampling()
        if extra.max_mel_tokens is not None:
            sampling = replace(sampling, max_mel_tokens=extra.max_mel_tokens)
        return cls(
            voice_of(options.voice_print),
            extra.emo_alpha,
            extra.emo_vector,
            options.seed,
            sampling,
        )
