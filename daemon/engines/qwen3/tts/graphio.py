"""The graph I/O of a ``qwen3-tts`` bundle: the shapes the engine binds.

One function per graph (names and the contract in params.py's docstring; the
talker's and predictor's Qwen3 I/O from daemon/engines/qwen3/common/shapes.py);
:func:`graph_needs` lists every graph the engine runs, which the engine's
``load`` requires of its runners and ``sdk.verify`` of the manifest.
"""

from __future__ import annotations

from collections.abc import Mapping

from daemon.engines.qwen3.common.shapes import Shapes, prefill_io, step_io
from daemon.engines.qwen3.tts.params import (
    CP_STEP,
    TEXT_PROJ,
    TtsParams,
    codec_key,
    speaker_key,
    talker_decode_key,
    talker_prefill_key,
)


def text_proj_io(p: TtsParams) -> Shapes:
    return {"x": (p.text.rows, p.text.hidden), "y": (p.text.rows, p.talker.hidden)}


def talker_prefill_io(p: TtsParams, n: int) -> Shapes:
    return {**prefill_io(p.talker, n), "h": (1, p.talker.hidden)}


def talker_decode_io(p: TtsParams, kv_len: int) -> Shapes:
    return {**step_io(p.talker, p.talker.hidden, kv_len), "h": (1, p.talker.hidden)}


def cp_step_io(p: TtsParams) -> Shapes:
    """The predictor's input is talker-wide (small_to_mtp_projection in-graph)."""
    return {**step_io(p.predictor, p.talker.hidden, p.predictor.groups), "head": (1,)}


def codec_io(p: TtsParams, frames: int) -> Shapes:
    c = p.codec
    return {
        "codes": (1, p.predictor.groups, frames),
        "wav": (1, 1, c.samples_per_frame * frames),
    }


def speaker_io(p: TtsParams, frames: int) -> Shapes:
    x = p.xvector
    assert x is not None and x.reflect_pad is not None
    return {
        "mel": (1, frames, x.n_mels),
        "valid": (1, frames),
        "reflect": (frames + 2 * x.reflect_pad,),
        "xvec": (1, x.dim),
    }


def graph_needs(p: TtsParams) -> dict[str, Mapping[str, tuple[int, ...] | None]]:
    """Every graph the engine runs with the shapes it binds: what the engine's
    ``load`` requires of its runners and ``sdk.verify`` of the manifest."""
    needs: dict[str, Mapping[str, tuple[int, ...] | None]] = {
        TEXT_PROJ: text_proj_io(p),
        CP_STEP: cp_step_io(p),
    }
    for n in p.prefill_buckets:
        needs[talker_prefill_key(n)] = talker_prefill_io(p, n)
    for n in p.kv_buckets:
        needs[talker_decode_key(n)] = talker_decode_io(p, n)
    for w in p.codec.windows:
        needs[codec_key(w.frames)] = codec_io(p, w.frames)
    if p.xvector is not None:
        for f in p.xvector.frame_buckets:
            needs[speaker_key(f)] = speaker_io(p, f)
    return needs
