"""What a ``qwen3-tts`` bundle's ``params`` hold, its file names and graph I/O.

``scripts/qwen3/tts/build.py`` writes exactly this schema into voice.yaml; the
engine reads it with :meth:`TtsParams.from_mapping` (daemon/config/reader.py),
so a bad bundle fails with the field named before any graph is touched.  Every
id comes from the checkpoint's config.json (never from code defaults: the ncnn
port found a code default EOS of 4198 where the checkpoint says 2150).

Graphs (team contract; Ht/Dt talker/text hidden, V talker vocab, Vc codebook,
G code groups, Ly/Kh/hd and Lc/Khc/hdc talker and predictor layers/kv heads/
head_dim, D speaker embedding)::

    text_proj            x [R,Dt] -> y [R,Ht]
    talker_prefill_<P>   x [1,P,Ht], mask [1,1,P,P], cos/sin [1,P,hd], last [1,P]
                         -> logits [1,V], h [1,Ht], k, v [Ly,Kh,P,hd]
    talker_decode_<L>    x [1,1,Ht], k_cache/v_cache [Ly,Kh,L,hd], mask [1,1,1,L],
                         cos/sin [1,1,hd] -> logits [1,V], h [1,Ht],
                         k_new/v_new [Ly,Kh,1,hd]
    cp_step              x [1,1,Ht], k_cache/v_cache [Lc,Khc,G,hdc], mask [1,1,1,G],
                         cos/sin [1,1,hdc], head int32 [1] -> logits [1,Vc], k_new/v_new
    codec_<T>            codes int32 [1,G,T] -> wav [1,1,samples_per_frame*T]
    speaker_<F>          mel [1,F,n_mels], valid [1,F], reflect int32 [F+2P]
                         -> xvec [1,D]   (base only; P xvector.reflect_pad)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Final, Literal

import msgspec

from daemon.config.reader import invalid, read
from daemon.engines.qwen3.common.shapes import (
    Count,
    DecoderShape,
    Index,
    Positive,
    Sizes,
    Text,
    settle_buckets,
)
from daemon.engines.qwen3.tts.sizes import (
    CodecParams,
    PredictorShape,
    TextShape,
    XVectorParams,
)
from daemon.sdk.bundles.keys import BucketKey

ENGINE_ID: Final = "qwen3-tts"
TEXT_PROJ: Final = "text_proj"
CP_STEP: Final = "cp_step"
#: CPU tables (float16 at full size, float32 for tiny checkpoints: ``embedding_dtype``)
TEXT_EMBEDDING: Final = "cpu/text_embedding.npy"  # [Vt, Dt]
CODEC_EMBEDDING: Final = "cpu/codec_embedding.npy"  # [V, Ht], the talker's
CP_EMBEDDING: Final = "cpu/cp_embedding.npy"  # [G-1, Vc, Ht], predictor tables
MEL_BASIS: Final = "cpu/mel_basis.npy"  # [n_mels, n_fft/2+1] (base)
TOKENIZER: Final = "text/tokenizer.json"
TEXT_FIELD: Final = "{text}"
#: upstream suppresses the top 1024 talker ids (its specials) but EOS
SPECIAL_IDS: Final = 1024


#: Graph keys by bucket: talker prefill by positions and decode by KV length,
#: codec by code frames, speaker encoder by mel frames.
talker_prefill_key: Final = BucketKey("talker_prefill_")
talker_decode_key: Final = BucketKey("talker_decode_")
codec_key: Final = BucketKey("codec_")
speaker_key: Final = BucketKey("speaker_")


@dataclass(frozen=True)
class TokenIds:
    """Text ids (config.json top level, tokenizer) and codec ids (talker_config)."""

    tts_pad: Index
    tts_bos: Index
    tts_eos: Index
    im_start: Index
    codec_pad: Index
    codec_bos: Index
    codec_eos: Index
    codec_think: Index
    codec_nothink: Index
    codec_think_bos: Index
    codec_think_eos: Index
    assistant: Index | None = None
    newline: Index | None = None

    TEXT = ("tts_pad", "tts_bos", "tts_eos", "im_start", "assistant", "newline")
    CODEC = ("codec_pad", "codec_bos", "codec_eos", "codec_think", "codec_nothink",
             "codec_think_bos", "codec_think_eos")  # fmt: skip


@dataclass(frozen=True)
class PromptParams:
    """``_build_assistant_text``; ``generate`` slices the ids by position."""

    template: Text = "<|im_start|>assistant\n{text}<|im_end|>\n<|im_start|>assistant\n"
    #: ``input_id[:, :3]``: the role rows
    role_tokens: Count = 3
    #: ``input_id[:, 3:-5]``: the tokens after the text
    tail_tokens: Count = 5

    def __post_init__(self) -> None:
        if self.template.count(TEXT_FIELD) != 1:
            raise invalid("template", f"one {TEXT_FIELD} field", self.template)


@dataclass(frozen=True)
class Speaker:
    """A CustomVoice speaker: its codec row and its dialect language (or None)."""

    id: Index
    dialect: str | None = None


@dataclass(frozen=True)
class Sampling:
    """generation_config.json merged over upstream's hard defaults
    (inference/qwen3_tts_model.py ``_merge_generate_kwargs``; ``generate``)."""

    #: [start, stop): talker ids never chosen, EOS excepted ([V - 1024, V))
    suppress: tuple[Index, Index]
    do_sample: bool = True
    top_k: Index = 50
    top_p: Annotated[float, msgspec.Meta(gt=0, le=1)] = 1.0
    temperature: Positive = 0.9
    repetition_penalty: Positive = 1.05
    #: EOS masked while fewer code0s exist (HF MinNewTokensLengthLogitsProcessor)
    min_new_tokens: Index = 2
    max_new_tokens: Count = 2048
    subtalker_do_sample: bool = True
    subtalker_top_k: Index = 50
    subtalker_top_p: Annotated[float, msgspec.Meta(gt=0, le=1)] = 1.0
    subtalker_temperature: Positive = 0.9


@dataclass(frozen=True)
class TtsParams:
    """``voice.yaml`` -> ``params`` of a ``qwen3-tts`` bundle."""

    kind: Literal["custom_voice", "base"]
    talker: DecoderShape
    text: TextShape
    predictor: PredictorShape
    prefill_buckets: Sizes
    kv_buckets: Sizes
    tokens: TokenIds
    #: config.json codec_language_id (dialect keys included: the dialect swap)
    languages: Mapping[Text, Index]
    codec: CodecParams
    sampling: Sampling
    prompt: PromptParams = PromptParams()
    #: custom_voice: spk_id + spk_is_dialect; base: none
    speakers: Mapping[Text, Speaker] = field(default_factory=dict)
    text_mode: Literal["non_streaming", "streaming"] = "non_streaming"
    embedding_dtype: Literal["float16", "float32"] = "float16"
    xvector: XVectorParams | None = None
    mask_value: float = -100.0

    def __post_init__(self) -> None:
        settle_buckets(self)
        if self.mask_value >= 0:
            raise invalid("mask_value", "a negative number", self.mask_value)
        self._check_kind()
        self._check_ids()

    def _check_kind(self) -> None:
        if self.kind == "base":
            if self.xvector is None:
                raise invalid(
                    "xvector", "the speaker encoder's settings (kind base)", None
                )
            if self.speakers:
                raise invalid("speakers", "none (kind base)", sorted(self.speakers))
            if self.xvector.dim != self.talker.hidden:
                raise invalid("xvector.dim", f"the talker hidden {self.talker.hidden}",
                              self.xvector.dim)  # fmt: skip
        else:
            if self.xvector is not None:
                raise invalid(
                    "xvector", "null (kind custom_voice)", "settings", raw=True
                )
            if not self.speakers:
                raise invalid(
                    "speakers", "at least one speaker (kind custom_voice)", {}
                )

    def _check_ids(self) -> None:
        v, vt, vc = self.talker.vocab, self.text.vocab, self.predictor.vocab
        if v < vc + SPECIAL_IDS:
            raise invalid("talker.vocab", f"at least codebook {vc} + {SPECIAL_IDS}", v)
        for name in TokenIds.TEXT:
            value = getattr(self.tokens, name)
            if value is not None and value >= vt:
                raise invalid(f"tokens.{name}", f"an id < text vocab {vt}", value)
        for name in TokenIds.CODEC:  # specials live above the codebook
            value = getattr(self.tokens, name)
            if not vc <= value < v:
                raise invalid(f"tokens.{name}", f"an id in [{vc}, {v})", value)
        for name, lang in self.languages.items():
            if not vc <= lang < v:
                raise invalid(f"languages.{name}", f"an id in [{vc}, {v})", lang)
        for name, spk in self.speakers.items():
            if not vc <= spk.id < v:
                raise invalid(f"speakers.{name}.id", f"an id in [{vc}, {v})", spk.id)
            if spk.dialect is not None and spk.dialect not in self.languages:
                known = sorted(self.languages)
                raise invalid(f"speakers.{name}.dialect",
                              f"one of the languages {known}", spk.dialect)  # fmt: skip
        lo, hi = self.sampling.suppress
        if not vc <= lo <= hi <= v:
            raise invalid(
                "sampling.suppress", f"[start, stop] within [{vc}, {v}]", [lo, hi]
            )

    @property
    def advertised_languages(self) -> tuple[str, ...]:
        """upstream ``get_supported_languages``: "auto", then the config's keys
        without "dialect" (dialects are reached through their speakers)."""
        return ("auto", *(n for n in self.languages if "dialect" not in n))

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], where: str = "") -> TtsParams:
        """``where`` prefixes errors (the engine adds "<bundle>: params: ")."""
        return read(data, cls, where=where)

    def to_dict(self) -> dict[str, Any]:
        return msgspec.to_builtins(self)  # type: ignore[no-any-return]
