"""The ``gpt-sovits-v2pro`` bundle layout: one place for file names and params.

Written by ``scripts/build-gptsovits`` (PC side) and read by the engine (board side),
so both import these names instead of repeating strings.

Graph keys (``voice.yaml`` → ``graphs``)::

    g2pw            g2pW BERT body, rows x tokens → hidden (head runs on the CPU)
    bert            chinese-roberta first 22 layers (hidden_states[-3]) at 128 tokens
    t2s_prefill     T2S prefill at P positions → h, k, v
    t2s_decode_<L>  one T2S decode step with a KV cache of length L (bucketed)
    vits_enc        SoVITS text encoder (MRTE) + reverse flow, frames x phones
    vits_gen        HiFiGAN on fixed windows (window/overlap frames, frame mask)

Graph I/O (names; shapes and dtypes are in ``voice.yaml`` per graph; the NPU
binaries of the T2S graphs have float16 K/V inputs/outputs, ``onnx/*.onnx`` keep
float32 everywhere)::

    g2pw            input_ids, token_type_ids, attention_mask [rows, tokens] int32,
                    position_ids [rows] int32 -> hidden [rows, H]
    bert            input_ids [1, T] int32, mask [1, 1, 1, T] (0 / mask_value)
                    -> hidden [1, T, bert_dim]  (rows 1..n-2 are the chars)
    t2s_prefill     xy [1, P, D], mask [1, 1, P, P] -> h, k, v [layers, H, P, dh]
    t2s_decode_<L>  x [1, 1, D], k_cache, v_cache [layers, H, L, dh],
                    mask [1, 1, 1, L] -> logits [1, vocab], k_new, v_new
    vits_enc        ssl, y_mask, text, text_mask, ge512, ge, noise [, stretch
                    [1, FR, FR], z_mask [1, 1, FR]] -> z  (speed.py; bundles
                    built before speed lack the two and speak at 1.0 only)
    vits_gen        z [1, inter, window], ge, mask [1, 1, window] -> audio
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Final

import msgspec

from daemon.config.fields import Count, Index
from daemon.config.reader import invalid, read
from daemon.engines.gptsovits.frontend.zh.g2pw import (
    BODY_INPUTS,
    G2PW_ROWS,
    G2PW_TOKENS,
)
from daemon.engines.gptsovits.reference.params import ReferenceParams
from daemon.engines.gptsovits.reference.style import ref_enc_io, sv_io
from daemon.engines.gptsovits.speed import STRETCH, Z_MASK, speed_io
from daemon.sdk.bundles.keys import BucketKey

ENGINE_ID: Final = "gpt-sovits-v2pro"

G2PW: Final = "g2pw"
BERT: Final = "bert"
T2S_PREFILL: Final = "t2s_prefill"
T2S_DECODE_PREFIX: Final = "t2s_decode_"
VITS_ENC: Final = "vits_enc"
VITS_GEN: Final = "vits_gen"
# Reference-side graphs (zero-shot voices; reference/): optional, all four or none.
HUBERT: Final = "hubert"
SSL_QUANT: Final = "ssl_quant"
REF_ENC: Final = "ref_enc"
SV: Final = "sv"
REFERENCE_GRAPHS: Final = (HUBERT, SSL_QUANT, REF_ENC, SV)
#: ``t2s_decode_<L>``: the decode step's graph by KV length
t2s_decode_key: Final = BucketKey(T2S_DECODE_PREFIX)


# --- cpu/*.npy (float32 unless noted) ---------------------------------------
T2S_TEXT_EMB: Final = "cpu/t2s_text_emb.npy"  # [phone_vocab, width]
T2S_BERT_PROJ_W: Final = "cpu/t2s_bert_proj_w.npy"  # [width, bert_dim]
T2S_BERT_PROJ_B: Final = "cpu/t2s_bert_proj_b.npy"  # [width]
T2S_AUDIO_EMB: Final = "cpu/t2s_audio_emb.npy"  # [vocab, width]
T2S_POS_ALPHA: Final = "cpu/t2s_pos_alpha.npy"  # [2] = (text alpha, audio alpha)
T2S_PE: Final = "cpu/t2s_pe.npy"  # [pe_rows, width] sinusoidal table from the module
T2S_PREDICT: Final = "cpu/t2s_predict.npy"  # [vocab, width] (no bias)
VITS_TEXT_EMB: Final = "cpu/vits_text_emb.npy"  # [phone_vocab, hidden]
VITS_CODEBOOK: Final = "cpu/vits_codebook.npy"  # [1024, ssl_dim]
#: g2pW output head tables; ``frontend.g2pw.G2pwHead.load(cpu_dir, prefix)``.
G2PW_HEAD_PREFIX: Final = "g2pw_"

# --- refs/<voice>.npz -------------------------------------------------------
REFS_DIR: Final = "refs"


def ref_file(voice: str) -> str:
    """Bundle path of a voice's reference archive (``voice.yaml`` voices.<v>.file)."""
    return f"{REFS_DIR}/{voice}.npz"


#: keys of each reference-voice archive
REF_PHONES: Final = "phones"  # int32 [n_ref_phones] (symbols_v2 ids)
REF_BERT: Final = "bert"  # float32 [n_ref_phones, bert_dim] (zeros for non-zh)
REF_PROMPT: Final = "prompt"  # int32 [n_prompt] semantic tokens
REF_GE: Final = "ge"  # float32 [gin, 1]
REF_GE512: Final = "ge512"  # float32 [512, 1]
REF_TEXT: Final = "text"  # str, the reference transcript
REF_LANG: Final = "lang"  # str, its language
#: str, how the prompt tokens were made: "hubert" (upstream's exact path) or
#: "approximate" (training tokens + mute tokens; absent in older bundles)
REF_PROMPT_SEMANTIC: Final = "prompt_semantic"
PROMPT_HUBERT: Final = "hubert"
PROMPT_APPROXIMATE: Final = "approximate"

# --- text/ -------------------------------------------------------------------
TEXT_DIR: Final = "text"  # vocab.txt + g2pW dictionaries (frontend.G2pwTables)


@dataclass(frozen=True)
class GsvParams:
    """``voice.yaml`` → ``params`` for this engine (read by ``from_mapping``)."""

    width: Count
    layers: Count
    heads: Count
    head_dim: Count
    vocab: Count
    eos: Index
    phone_vocab: Count
    prefill_len: Count
    kv_buckets: Annotated[tuple[Count, ...], msgspec.Meta(min_length=1)]
    max_new_tokens: Count
    vits_frames: Count
    vits_phones: Count
    vits_hidden: Count
    ssl_dim: Count
    gin: Count
    hop: Count
    gen_window: Count
    gen_overlap: Index
    noise_scale: float
    bert_tokens: Count
    bert_dim: Count
    g2pw_rows: Count
    g2pw_tokens: Count
    mask_value: float
    top_k: Count
    top_p: float
    temperature: float
    repetition_penalty: float
    eos_block_steps: Index
    #: sizes of the reference-side graphs (zero-shot voices); None: the bundle
    #: was built without them and speaks its own voices only
    reference: ReferenceParams | None = None

    def __post_init__(self) -> None:
        # Buckets in any order; the engine picks the smallest that fits.
        object.__setattr__(self, "kv_buckets", tuple(sorted(self.kv_buckets)))
        if self.heads * self.head_dim != self.width:
            raise invalid(
                "head_dim",
                f"width / heads = {self.width / self.heads:g}",
                self.head_dim,
            )

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], where: str = "") -> GsvParams:
        """``where`` prefixes errors (the engine adds "<bundle>: params: ")."""
        return read(data, cls, where=where)

    def to_dict(self) -> dict[str, Any]:
        d = {f: getattr(self, f) for f in self.__dataclass_fields__}
        d["kv_buckets"] = list(self.kv_buckets)
        if self.reference is None:
            del d["reference"]  # older readers know no such key
        else:
            d["reference"] = self.reference.to_dict()
        return d


# --- graph I/O the engine feeds and reads ------------------------------------
Shapes = dict[str, tuple[int, ...]]


def t2s_prefill_io(p: GsvParams) -> Shapes:
    n = p.prefill_len
    kv = (p.layers, p.heads, n, p.head_dim)
    return {
        "xy": (1, n, p.width),
        "mask": (1, 1, n, n),
        "h": (1, n, p.width),
        "k": kv,
        "v": kv,
    }


def t2s_decode_io(p: GsvParams, kv_len: int) -> Shapes:
    cache = (p.layers, p.heads, kv_len, p.head_dim)
    new = (p.layers, p.heads, 1, p.head_dim)
    return {
        "x": (1, 1, p.width),
        "k_cache": cache,
        "v_cache": cache,
        "mask": (1, 1, 1, kv_len),
        "logits": (1, p.vocab),
        "k_new": new,
        "v_new": new,
    }


def vits_enc_io(p: GsvParams, inter: int, mrte: int) -> Shapes:
    fr, tt = p.vits_frames, p.vits_phones
    return {
        "ssl": (1, p.ssl_dim, fr),
        "y_mask": (1, 1, fr),
        "text": (1, p.vits_hidden, tt),
        "text_mask": (1, 1, tt),
        "ge512": (1, mrte, 1),
        "ge": (1, p.gin, 1),
        "noise": (1, inter, fr),
        "z": (1, inter, fr),
    }


def vits_gen_io(p: GsvParams, inter: int) -> Shapes:
    w = p.gen_window
    return {
        "z": (1, inter, w),
        "ge": (1, p.gin, 1),
        "mask": (1, 1, w),
        "audio": (1, 1, w * p.hop),
    }


def vits_widths(graphs: Mapping[str, Any]) -> tuple[int, int] | None:
    """(flow width, MRTE width) from the ``vits_enc`` graph's ``noise``/``ge512``:
    GsvParams has neither, the graph's I/O fixes them.  None without 3-d such
    inputs (then the graph check names what is wrong)."""
    enc = graphs.get(VITS_ENC)
    shapes = {t.name: tuple(t.shape) for t in enc.inputs} if enc else {}
    noise, ge512 = shapes.get("noise", ()), shapes.get("ge512", ())
    if len(noise) != 3 or len(ge512) != 3:
        return None
    return noise[1], ge512[1]


def graph_needs(
    p: GsvParams, graphs: Mapping[str, Any]
) -> dict[str, Mapping[str, tuple[int, ...] | None]]:
    """Every graph the engine runs with the shapes it binds or feeds: what
    ``GptSovitsEngine.load`` requires of its runners and ``Bundle.verify`` of
    the manifest.  ``graphs`` (runners or manifest specs) only lends the
    ``vits_enc`` widths (:func:`vits_widths`)."""
    body: dict[str, tuple[int, ...] | None] = {
        name: (G2PW_ROWS, G2PW_TOKENS) for name in BODY_INPUTS[:3]
    }
    needs: dict[str, Mapping[str, tuple[int, ...] | None]] = {
        G2PW: {**body, BODY_INPUTS[3]: (G2PW_ROWS,), "hidden": None},
        BERT: {
            "input_ids": (1, p.bert_tokens),
            "mask": (1, 1, 1, p.bert_tokens),
            "hidden": (1, p.bert_tokens, p.bert_dim),
        },
        T2S_PREFILL: t2s_prefill_io(p),
        **{t2s_decode_key(n): t2s_decode_io(p, n) for n in p.kv_buckets},
    }
    widths = vits_widths(graphs)
    if widths is None:
        needs[VITS_ENC] = {"noise": None, "ge512": None}
        needs[VITS_GEN] = {}
    else:
        needs[VITS_ENC] = vits_enc_io(p, *widths)
        enc = {t.name for t in graphs[VITS_ENC].inputs}
        if STRETCH in enc or Z_MASK in enc:  # a speed graph: both, at FR
            needs[VITS_ENC] = {**needs[VITS_ENC], **speed_io(p.vits_frames)}
        needs[VITS_GEN] = vits_gen_io(p, widths[0])
    if p.reference is not None:  # all four or none (cloning needs each)
        needs.update({key: {} for key in REFERENCE_GRAPHS})
        needs[SV] = sv_io(p.reference)
        if widths is not None:  # its ge512 feeds vits_enc
            needs[REF_ENC] = ref_enc_io(p.reference, p.gin, widths[1])
    return needs
