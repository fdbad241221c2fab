"""Per-request settings of the ``gpt-sovits-v2pro`` engine, validated up front.

``SynthesisOptions.extra`` may carry upstream's per-request sampling knobs
(api_v2: top_k, top_p, temperature, repetition_penalty) and ``max_new_tokens``,
a lower token cap per segment (the static VITS graph fixes the upper one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from daemon.engine.tts import SynthesisOptions
from daemon.engines.gptsovits.layout import ENGINE_ID, GsvParams
from daemon.engines.gptsovits.sampling import SamplingConfig
from daemon.engines.gptsovits.tables import Reference

EXTRA_KEYS: Final = (
    "top_k",
    "top_p",
    "temperature",
    "repetition_penalty",
    "max_new_tokens",
)


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

    @classmethod
    def from_options(
        cls,
        options: SynthesisOptions,
        p: GsvParams,
        voices: dict[str, Reference],
        default_voice: str,
        token_cap: int,
    ) -> Request:
        """Everything checked before the first graph call (ValueError)."""
        unknown = sorted(set(options.extra) - set(EXTRA_KEYS))
        if unknown:
            raise ValueError(
                f"{ENGINE_ID}: unknown option(s) {unknown}; known: {list(EXTRA_KEYS)}"
            )
        name = options.voice or default_voice
        if name not in voices:
            raise ValueError(
                f"{ENGINE_ID}: unknown voice {name!r}; this bundle has {sorted(voices)}"
            )
        if options.speed != 1.0:
            # Upstream stretches the latent inside enc_p before the flow; the
            # static vits_enc graph has no such input.
            raise ValueError(f"{ENGINE_ID}: speed must be 1.0, got {options.speed}")
        sampling = default_sampling(p).with_overrides(options.extra)
        max_tokens = options.extra.get("max_new_tokens", token_cap)
        if (
            not isinstance(max_tokens, int)
            or isinstance(max_tokens, bool)
            or not 1 <= max_tokens <= token_cap
        ):
            raise ValueError(
                f"{ENGINE_ID}: max_new_tokens must be an integer in [1, {token_cap}], "
                f"got {max_tokens!r}"
            )
        return cls(voices[name], sampling, max_tokens, options.seed)
