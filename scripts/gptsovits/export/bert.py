"""The ``bert`` graph: chinese-roberta's first layers, i.e. hidden_states[-3].

Upstream (docs/gpt-sovits.md, BERT features) takes hidden_states[-3] of the
24-layer chinese-roberta-wwm-ext-large: the output of layer 22. Only those
layers are exported. Inputs: input_ids [1, T] int32 (clipped in-graph to the
vocabulary: out-of-range Gather indices crashed the DSP in the reference port)
and an additive mask [1, 1, 1, T] (0 = token, MASK_VALUE = padding). Token types
are all 0 and positions 0..T-1, so both embeddings fold into constants.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import Tensor, nn

from scripts.common.build.onnx_export import GraphSpec, export_static
from scripts.gptsovits.shapes import EXTERNAL_DATA, MASK_VALUE

# hidden_states[-3]: every layer but the last two.
SKIPPED_TOP_LAYERS = 2
INPUTS = ("input_ids", "mask")
OUTPUT = "hidden"


def load_bert(path: Path) -> nn.Module:
    """The HF BertModel in ``path`` (a chinese-roberta-style directory)."""
    from transformers import BertModel

    if not (Path(path) / "config.json").is_file():
        raise FileNotFoundError(f"{path}: no config.json (not a HF BERT directory)")
    model = BertModel.from_pretrained(
        str(path), add_pooling_layer=False, attn_implementation="eager"
    )
    return model.eval()


def graph_layers(bert: nn.Module) -> int:
    return bert.config.num_hidden_layers - SKIPPED_TOP_LAYERS


class BertFeatures(nn.Module):
    """Exported graph ``bert``: embeddings + the first `layers` encoder layers."""

    def __init__(self, bert: nn.Module, tokens: int) -> None:
        super().__init__()
        self.bert, self.tokens = bert, tokens
        self.layers = graph_layers(bert)
        self.vocab = bert.config.vocab_size

    def forward(self, input_ids: Tensor, mask: Tensor) -> Tensor:
        ids = input_ids.clamp(0, self.vocab - 1)
        emb = self.bert.embeddings
        positions = torch.arange(self.tokens).unsqueeze(0)
        x = (
            emb.word_embeddings(ids)
            + emb.token_type_embeddings(torch.zeros_like(positions))
            + emb.position_embeddings(positions)
        )
        x = emb.LayerNorm(x)
        for layer in self.bert.encoder.layer[: self.layers]:
            out = layer(x, attention_mask=mask)
            x = out[0] if isinstance(out, tuple) else out
        return x


def export_bert(bert: nn.Module, tokens: int, layers: int, path: Path) -> GraphSpec:
    """The ``bert`` graph of ``tokens`` ids at ``path``; ValueError when the
    model's hidden_states[-3] is not layer ``layers`` (what the shapes say)."""
    if graph_layers(bert) != layers:
        raise ValueError(
            f"--bert {bert.name_or_path}: hidden_states[-3] is layer "
            f"{graph_layers(bert)}, the graph shapes expect {layers}"
        )
    args = (torch.zeros(1, tokens, dtype=torch.int32), torch.zeros(1, 1, 1, tokens))
    # kept unfolded: onnxruntime's later fusions (the CPU backend runs them all)
    # fail on a BASIC-folded BERT
    return export_static(
        BertFeatures(bert, tokens), args, INPUTS, [OUTPUT], path, EXTERNAL_DATA, False
    )


def bert_inputs(token_ids: list[int], tokens: int) -> dict[str, np.ndarray]:
    """Static feeds for one [CLS] ... [SEP] sequence."""
    if len(token_ids) > tokens:
        raise ValueError(f"{len(token_ids)} BERT tokens exceed the graph's {tokens}")
    ids = np.zeros((1, tokens), np.int32)
    ids[0, : len(token_ids)] = token_ids
    mask = np.full((1, 1, 1, tokens), MASK_VALUE, np.float32)
    mask[..., : len(token_ids)] = 0.0
    return {"input_ids": ids, "mask": mask}


@torch.no_grad()
def reference_hidden(bert: nn.Module, token_ids: list[int]) -> np.ndarray:
    """Upstream's computation: hidden_states[-3] at the exact length."""
    out = bert(torch.tensor([token_ids]), output_hidden_states=True)
    return out.hidden_states[-3][0].numpy()
