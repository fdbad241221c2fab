"""w2v-BERT's static graphs (one per feature-row bucket) and their CPU gate.

``load_w2v_bert(snapshot, stats)``: the hub snapshot of facebook/w2v-bert-2.0
(config.json + weights, read by transformers) and the model directory's
``wav2vec2bert_stats.pt`` ({"mean", "var"}: upstream divides by sqrt(var)),
as the port up to the layer upstream reads.  The gate feeds clips of several
lengths, odd frame counts among them (their last row is masked), padded into
each bucket, against transformers' own model on the clip alone
(build/gates.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from daemon.sdk.audio.fbank import FRAME, SHIFT
from scripts.common.build.onnx_export import GraphSpec, export_static
from scripts.common.floor import in_float64
from scripts.common.gate_result import GateResult

from hexvoice_indextts.build.gates import Case, gate_graph, gated_buckets
from hexvoice_indextts.graphs.w2v_bert import StaticW2vBert
from hexvoice_indextts.layout import w2v_bert_name as graph_name
from hexvoice_indextts.model_dir import W2V_LAYER
from hexvoice_indextts.voice.semantic import (
    INPUTS,
    OUTPUT,
    ROW,
    STRIDE,
    bucket_inputs,
    w2v_features,
)


def load_w2v_bert(
    snapshot: Path, stats: Path, layer: int = W2V_LAYER
) -> tuple[Any, StaticW2vBert]:
    """(transformers' model, the port over its first ``layer`` layers)."""
    from transformers import Wav2Vec2BertModel

    model = Wav2Vec2BertModel.from_pretrained(snapshot).eval()
    s = torch.load(stats, map_location="cpu", weights_only=True)
    return model, StaticW2vBert(model, layer, s["mean"], torch.sqrt(s["var"])).eval()


def export_w2v_bert(port: StaticW2vBert, rows: int, out: Path) -> GraphSpec:
    """The ``w2v_bert_R<rows>`` graph: features [1, rows, 160] + mask -> hidden."""
    args = (torch.zeros(1, rows, ROW), torch.ones(1, rows))
    path = Path(out) / f"{graph_name(rows)}.onnx"
    return export_static(port, args, INPUTS, (OUTPUT,), path)


def samples_for(frames: int) -> int:
    """A 16 kHz clip of exactly ``frames`` fbank frames."""
    return FRAME + (frames - 1) * SHIFT


def reference_hidden(
    model: Any, port: StaticW2vBert, f: np.ndarray, m: np.ndarray
) -> np.ndarray:
    out = model(
        input_features=torch.from_numpy(f).to(port.mean.dtype)[None],
        attention_mask=torch.from_numpy(m).long()[None],
        output_hidden_states=True,
    )
    return ((out.hidden_states[len(port.layers)] - port.mean) / port.std).numpy()


def gate_cpu(
    model: Any,
    port: StaticW2vBert,
    graphs: Iterable[GraphSpec],
    buckets: Sequence[int],
    seed: int = 0,
) -> list[GateResult]:
    """One rel-error gate per bucket graph, over fbank frame counts
    (build/gates.gated_buckets, two frames per row: an odd count masks its
    last row)."""
    results = []
    for spec, rows, frame_counts in gated_buckets(graphs, buckets, STRIDE, STRIDE):
        cases = []
        for i, frames in enumerate(frame_counts):
            g = np.random.default_rng(seed + i)
            audio = (0.3 * g.standard_normal(samples_for(frames))).clip(-1, 1)
            f, m = w2v_features(audio.astype(np.float32))
            with torch.no_grad():
                upstream = reference_hidden(model, port, f, m)
                with in_float64(model), in_float64(port):
                    exact = reference_hidden(model, port, f, m)
            cases.append(Case(bucket_inputs(f, m, rows), upstream, exact))
        results.append(gate_graph(spec, cases))
    return results
