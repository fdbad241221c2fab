"""The code predictor: codes 1..15 of a frame from the talker's ``h`` and code0.

Upstream (core/models/modeling_qwen3_tts.py, the talker's ``forward`` calling
``code_predictor.generate``; docs/qwen3.md, TTS generation loop): a 2-row prefill
[h, C(code0)] whose last row goes through ``lm_head[0]`` (code1), then step
s = 1..14 embeds code_s with ``codec_embedding[s-1]`` and predicts code_{s+1}
with ``lm_head[s]``; positions 0..15, its own KV, standard RoPE.  Here that is
``groups`` calls of the one ``cp_step`` graph on a ``groups``-row cache:

    position 0        x = h                        (logits unused)
    position 1        x = C(code0), head 0     ->  code1
    position s >= 2   x = cp_table[s-2](code_{s-1}), head s-1  ->  code_s

C is the talker's codec embedding; the graph holds the stacked heads and the
``small_to_mtp_projection``.  The next talker input is then
C(code0) + sum_i cp_table[i-1](code_i) (plus the text row; generator.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from daemon.engines.qwen3.tts.frames.talker import GraphTime
from daemon.engines.qwen3.tts.graphio import cp_step_io
from daemon.engines.qwen3.tts.params import TtsParams
from daemon.sdk.ar.kv import KvGraph
from daemon.sdk.ar.rope import rope_tables

if TYPE_CHECKING:
    from daemon.sdk.cancel import CancelToken
    from daemon.sdk.graphs import Runner

#: (head k's logits [Vc], k) -> code_{k+1}: a sampler, or teacher forcing
ChooseCode = Callable[[np.ndarray, int], int]


class Predictor:
    """The ``cp_step`` graph with its fixed ``groups``-row KV."""

    def __init__(
        self,
        p: TtsParams,
        runner: Runner,
        codec_embedding: np.ndarray,
        cp_embedding: np.ndarray,
        time: GraphTime,
    ) -> None:
        d = p.predictor
        self.groups, self.time = d.groups, time
        expected = (d.groups - 1, d.vocab, p.talker.hidden)
        if cp_embedding.shape != expected:
            raise ValueError(
                f"predictor tables are {list(cp_embedding.shape)}, "
                f"params say {list(expected)}"
            )
        self.codec_embedding, self.cp_embedding = codec_embedding, cp_embedding
        self.graph = KvGraph(runner, cp_step_io(p), d.groups, p.mask_value)
        cos, sin = rope_tables(d.head_dim, d.rope_theta, d.attention_scaling, d.groups)
        self.cos, self.sin = cos, sin
        b = self.graph.bind()
        self._x, self._head = b["x"][0, 0], b["head"]
        self._cos, self._sin, self._logits = (
            b["cos"][0, 0],
            b["sin"][0, 0],
            b["logits"][0],
        )

    def frame(
        self,
        h: np.ndarray,
        code0: int,
        choose: ChooseCode,
        cancel: CancelToken | None = None,
    ) -> tuple[list[int], np.ndarray]:
        """Codes 1..groups-1 of the frame starting with ``code0``, and the
        talker's next codec input C(code0) + sum cp_table[i-1](code_i) (float32
        [Ht]).  ``cancel`` is checked before every graph call."""
        g = self.graph
        g.start(g.k, g.v, 0)  # clear the previous frame's rows
        codes: list[int] = []
        row = np.array(self.codec_embedding[code0], np.float32)
        for pos in range(self.groups):
            if cancel is not None:
                cancel.check()
            if pos == 0:
                self._x[...] = h
            elif pos == 1:
                self._x[...] = row
            else:
                self._x[...] = self.cp_embedding[pos - 2, codes[-1]]
            # position 0's logits are unused; any head will do
            self._head[0] = max(pos - 1, 0)
            self._cos[...], self._sin[...] = self.cos[pos], self.sin[pos]
            g.step()
            self.time.predictor += g.graph_seconds
            if pos:
                code = choose(self._logits, pos - 1)
                codes.append(code)
                row += self.cp_embedding[pos - 1, code]
        self.time.count("cp_step_frame")
        return codes, row
