"""What a ``qwen3-asr`` bundle's ``params`` hold, its file names and graph I/O.

``scripts/qwen3/asr/build.py`` writes exactly this schema into voice.yaml; the
engine reads it with :meth:`AsrParams.from_mapping` (daemon/config/reader.py),
so a bad bundle fails with the field named before any graph is touched.

Graphs (team contract; C chunks per window, T tokens per chunk, W = C * T)::

    encoder      mel [C,1,M,F], stem_mask1 [C,1,1,F/2], stem_mask2 [C,1,1,F/4],
                 key_mask [1,1,1,W] -> audio [W,H]
    prefill_<P>  x [1,P,H], mask [1,1,P,P], cos/sin [1,P,hd], last [1,P]
                 -> logits [1,V], k, v [Ly,Kh,P,hd]
    decode_<L>   x [1,1,H], k_cache/v_cache [Ly,Kh,L,hd], mask [1,1,1,L],
                 cos/sin [1,1,hd] -> logits [1,V], k_new/v_new [Ly,Kh,1,hd]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Final

import msgspec

from daemon.config.reader import invalid, read
from daemon.engines.qwen3.common import shapes as stack_io
from daemon.engines.qwen3.common.shapes import (
    Count,
    DecoderShape,
    Index,
    Shapes,
    Sizes,
    Text,
    settle_buckets,
)
from daemon.sdk.bundles.keys import BucketKey

ENGINE_ID: Final = "qwen3-asr"
ENCODER: Final = "encoder"
#: token embeddings [V, H] (float16 at full size, float32 for tiny checkpoints)
EMBED_TOKENS: Final = "cpu/embed_tokens.npy"
#: the checkpoint's tokenizer.json (read with ``tokenizers``)
TOKENIZER: Final = "text/tokenizer.json"
#: where the prompt template puts the context and the audio pads
CONTEXT_FIELD: Final = "{context}"
AUDIO_FIELD: Final = "{audio}"
LANGUAGE_FIELD: Final = "{language}"


#: Graph keys by bucket: prefill by prompt positions, decode by KV length.
prefill_key: Final = BucketKey("prefill_")
decode_key: Final = BucketKey("decode_")


@dataclass(frozen=True)
class MelParams:
    """The feature extractor (preprocessor_config.json) and the encoder chunking."""

    n_mels: Count
    n_fft: Count
    hop_length: Count
    sampling_rate: Count
    #: mel frames per conv-stem chunk (upstream hard-codes 100)
    chunk_frames: Count
    #: encoder tokens of a full chunk (upstream hard-codes 13)
    chunk_tokens: Count
    #: chunks per attention window: n_window_infer // (2 * n_window)
    window_chunks: Count

    @property
    def window_tokens(self) -> int:
        return self.chunk_tokens * self.window_chunks

    @property
    def window_frames(self) -> int:
        return self.chunk_frames * self.window_chunks


@dataclass(frozen=True)
class TokenIds:
    """Special token ids, from config.json and the tokenizer."""

    audio_pad: Index
    audio_start: Index
    audio_end: Index
    im_start: Index
    im_end: Index
    eos: Annotated[tuple[Index, ...], msgspec.Meta(min_length=1)]


@dataclass(frozen=True)
class PromptParams:
    """The checkpoint's chat template, rendered at build time.

    docs/qwen3.md, ASR prompt and special ids.
    """

    #: with ``{context}`` (the system turn) and ``{audio}`` (where the pads go)
    template: Text
    #: appended when the language is forced, with ``{language}``
    language_suffix: Text

    def __post_init__(self) -> None:
        for name in (CONTEXT_FIELD, AUDIO_FIELD):
            if self.template.count(name) != 1:
                raise invalid("template", f"one {name} field", self.template)
        if LANGUAGE_FIELD not in self.language_suffix:
            raise invalid(
                "language_suffix", f"a {LANGUAGE_FIELD} field", self.language_suffix
            )


@dataclass(frozen=True)
class AsrParams:
    """``voice.yaml`` -> ``params`` of a ``qwen3-asr`` bundle."""

    hidden: Count
    head_dim: Count
    layers: Count
    kv_heads: Count
    vocab: Count
    rope_theta: Annotated[float, msgspec.Meta(gt=0)]
    #: the rope init's attention_scaling (cos and sin are multiplied by it)
    rope_scaling_factor: Annotated[float, msgspec.Meta(gt=0)]
    mel: MelParams
    prefill_buckets: Sizes
    kv_buckets: Sizes
    tokens: TokenIds
    prompt: PromptParams
    #: upstream SUPPORTED_LANGUAGES names ("Chinese", "English", ...)
    languages: Annotated[tuple[Text, ...], msgspec.Meta(min_length=1)]
    max_new_tokens: Count = 512
    mask_value: float = -100.0

    def __post_init__(self) -> None:
        if self.head_dim % 2:
            raise invalid("head_dim", "an even number (RoPE halves)", self.head_dim)
        settle_buckets(self)
        ids = self.tokens
        for name in ("audio_pad", "audio_start", "audio_end", "im_start", "im_end"):
            if getattr(ids, name) >= self.vocab:
                raise invalid(f"tokens.{name}", f"an id < vocab {self.vocab}",
                              getattr(ids, name))  # fmt: skip
        if self.mask_value >= 0:
            raise invalid("mask_value", "a negative number", self.mask_value)

    @property
    def decoder(self) -> DecoderShape:
        """The text decoder's sizes, as the shared Qwen3 runtime reads them."""
        return DecoderShape(
            self.hidden, self.head_dim, self.layers, self.kv_heads, self.vocab,
            self.rope_theta, self.rope_scaling_factor,
        )  # fmt: skip

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], where: str = "") -> AsrParams:
        """``where`` prefixes errors (the engine adds "<bundle>: params: ")."""
        return read(data, cls, where=where)

    def to_dict(self) -> dict[str, Any]:
        return msgspec.to_builtins(self)  # type: ignore[no-any-return]


# --- graph I/O the engine feeds and reads ------------------------------------


def encoder_io(p: AsrParams) -> Shapes:
    m = p.mel
    c, f = m.window_chunks, m.chunk_frames
    return {
        "mel": (c, 1, m.n_mels, f),
        "stem_mask1": (c, 1, 1, f // 2),
        "stem_mask2": (c, 1, 1, f // 4),
        "key_mask": (1, 1, 1, m.window_tokens),
        "audio": (m.window_tokens, p.hidden),
    }


def prefill_io(p: AsrParams, n: int) -> Shapes:
    return stack_io.prefill_io(p.decoder, n)


def decode_io(p: AsrParams, kv_len: int) -> Shapes:
    return stack_io.step_io(p.decoder, p.hidden, kv_len)


def graph_needs(p: AsrParams) -> dict[str, Mapping[str, tuple[int, ...] | None]]:
    """Every graph the engine runs with the shapes it binds: what the engine's
    ``load`` requires of its runners and ``sdk.verify`` of the manifest."""
    needs: dict[str, Mapping[str, tuple[int, ...] | None]] = {ENCODER: encoder_io(p)}
    for n in p.prefill_buckets:
        needs[prefill_key(n)] = prefill_io(p, n)
    for n in p.kv_buckets:
        needs[decode_key(n)] = decode_io(p, n)
    return needs
