"""Per-request settings of the ``gpt-sovits-v2pro`` engine, validated up front.

``SynthesisOptions.extra`` may carry upstream's per-request sampling knobs
(api_v2: top_k, top_p, temperature, repetition_penalty) and ``max_new_tokens``,
a lower token cap per segment (the static VITS graph fixes the upper one).

``SynthesisOptions.speed`` is upstream's ``speed_factor`` (speed.py), checked
at the edge against ``Capabilities.speed_range``.  Slow speech stretches a
segment's tokens to more latent frames, so below speed 1 the token cap is the
most tokens whose stretched frames still fit the VITS graph; a segment that
reaches it is re-split like any capped one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import msgspec

from daemon.config.reader import fail, read
from daemon.engines.gptsovits.layout import ENGINE_ID, GsvParams
from daemon.engines.gptsovits.sampling import SamplingConfig
from daemon.engines.gptsovits.speed import max_tokens as max_tokens_at
from daemon.engines.gptsovits.tables import Reference
from daemon.engines.gptsovits.vits import FRAMES_PER_TOKEN
from daemon.sdk.tts import SynthesisOptions


class Extra(msgspec.Struct, frozen=True):
    """The ``SynthesisOptions.extra`` keys this engine understands (their ranges
    are ``SamplingConfig``'s checks)."""

    top_k: int | float | None = None  # 2.0 from a JSON client is 2 (sampling.py)
    top_p: float | None = None
    temperature: float | None = None
    repetition_penalty: float | None = None
    max_new_tokens: Annotated[int, msgspec.Meta(ge=1)] | None = None


def default_sampling(p: GsvParams) -> SamplingConfig:
    return SamplingConfig(
        top_k=int(p.top_k),
        top_p=float(p.top_p),
        temperature=float(p.temperature),
        repetition_penalty=float(p.repetition_penalty),
        eos=int(p.eos),
        eos_block_steps=int(p.eos_block_steps),
    )


@dataclass(frozen=True)
class Request:
    voice: Reference
    sampling: SamplingConfig
    max_tokens: int
    seed: int | None
    speed: float = 1.0

    @classmethod
    def from_options(
        cls,
        options: SynthesisOptions,
        p: GsvParams,
        voices: dict[str, Reference],
        default_voice: str,
        token_cap: int,
    ) -> Request:
        """The engine's own knobs (``extra``), checked before the first graph
        call (ValueError)."""
        extra = read(options.extra, Extra, where=ENGINE_ID)
        # The voice and the speed were checked at the edge against the
        # engine's capabilities (daemon.service.edge.requests.check), not again here.
        name = options.voice or default_voice
        given = {
            k: v for k, v in msgspec.structs.asdict(extra).items() if v is not None
        }
        sampling = default_sampling(p).with_overrides(given)
        max_tokens = token_cap if extra.max_new_tokens is None else extra.max_new_tokens
        if max_tokens > token_cap:
            raise fail(
                ENGINE_ID,
                "max_new_tokens",
                f"an integer in [1, {token_cap}]",
                max_tokens,
                ValueError,
            )
        sp = float(options.speed)
        max_tokens = min(max_tokens, max_tokens_at(p.vits_frames, FRAMES_PER_TOKEN, sp))
        return cls(voices[name], sampling, max_tokens, options.seed, sp)
