"""GPT-SoVITS v2Pro graphs at the reference port's full shapes, random weights.

The latency model needs the graphs the port timed (docs/board.md, reference port graphs)
at full size; only MACs and bytes matter, so random weights are fine. Dims are
upstream's: T2S 24 layers x 512 (16 heads, FFN 2048, vocab 1025, bert 1024;
scripts/gptsovits/synthetic/voice.py T2S_V2PRO),
SoVITS from s2v2Pro.json (scripts/gptsovits/synthetic/voice.py s2v2pro_hparams),
bert = chinese-roberta-wwm-ext-large (1024 wide, 16 heads, FFN 4096, first 22
of 24 layers), g2pw = g2pW's bert-base-chinese body (768, 12 layers, 12 heads,
FFN 3072) cut at the queried char's hidden.

Differences from the port's graphs (stated in every report): our t2s_decode
takes k_cache [24,16,L,32] fp16 (port: kT_cache [24,16,32,L] fp32) and outputs
fp16 k/v; our vits_gen takes a frame mask as a third input; our g2pw body is a
torch BertModel export (port: surgery on g2pW.onnx), same layers and sizes.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from scripts.gptsovits.export import graphs as export
from scripts.gptsovits.export.bert import BertFeatures
from scripts.gptsovits.models.sovits import SovitsDims, SovitsModel
from scripts.gptsovits.models.t2s import T2SModel
from scripts.gptsovits.shapes import FULL, GraphShapes
from scripts.gptsovits.synthetic.voice import (
    PHONE_VOCAB,
    SEMANTIC_VOCAB,
    T2S_V2PRO,
    s2v2pro_hparams,
)

# Sizes upstream hard-codes (docs/gpt-sovits.md, SoVITS decode): cnhubert 768, MRTE 512,
# ERes2NetV2 20480-d, ref_enc on 704 bins with MelStyleEncoder's hidden 128.
SOVITS_WEIGHTS = {
    "phone_vocab": PHONE_VOCAB,
    "ssl": 768,
    "mrte": 512,
    "sv": 20480,
    "ref_bins": 704,
    "ref_hidden": 128,
    "codebook": SEMANTIC_VOCAB - 1,
}
# chinese-roberta-wwm-ext-large and bert-base-chinese configs (HF config.json).
BERT_VOCAB = 21128
ROBERTA_LARGE = {"hidden": 1024, "layers": 24, "heads": 16, "ffn": 4096}
BERT_BASE = {"hidden": 768, "layers": 12, "heads": 12, "ffn": 3072}
MAX_POSITIONS = 512


def _bert(size: dict[str, int]) -> nn.Module:
    from transformers import BertConfig, BertModel

    cfg = BertConfig(
        vocab_size=BERT_VOCAB,
        hidden_size=size["hidden"],
        num_hidden_layers=size["layers"],
        num_attention_heads=size["heads"],
        intermediate_size=size["ffn"],
        max_position_embeddings=MAX_POSITIONS,
        type_vocab_size=2,
        attn_implementation="eager",
    )
    return BertModel(cfg, add_pooling_layer=False).eval()


class G2pwBody(nn.Module):
    """g2pW's BERT body at [rows, tokens] -> the queried char's hidden [rows, H]."""

    def __init__(self, bert: nn.Module) -> None:
        super().__init__()
        self.bert = bert

    def forward(self, ids, types, mask, positions):  # noqa: ANN001 - traced
        seq = self.bert(
            ids.long(), attention_mask=mask.long(), token_type_ids=types.long()
        ).last_hidden_state
        rows = torch.arange(ids.shape[0])
        return seq[rows, positions.long()]


def export_all(out: Path, shapes: GraphShapes = FULL) -> dict[str, Path]:
    """Write every graph once (skips files already there); name -> path."""
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    paths: dict[str, Path] = {}
    if not (out / "t2s_prefill.onnx").is_file():
        export.export_t2s(T2SModel(T2S_V2PRO).eval(), shapes, out, torch.float16)
    paths["t2s_prefill"] = out / "t2s_prefill.onnx"
    for n in shapes.kv_buckets:
        paths[f"t2s_decode_{n}"] = out / f"t2s_decode_L{n}.onnx"
    if not (out / "vits_gen.onnx").is_file():
        dims = SovitsDims.from_hparams(s2v2pro_hparams(), **SOVITS_WEIGHTS)
        export.export_vits(SovitsModel(dims).eval(), shapes, out)
    paths["vits_enc"], paths["vits_gen"] = out / "vits_enc.onnx", out / "vits_gen.onnx"
    t = shapes.bert_tokens
    if not (out / "bert.onnx").is_file():
        export._export(
            BertFeatures(_bert(ROBERTA_LARGE), t),
            (torch.zeros(1, t, dtype=torch.int32), torch.zeros(1, 1, 1, t)),
            ["input_ids", "mask"],
            ["hidden"],
            out / "bert.onnx",
            fold=False,
        )
    paths["bert"] = out / "bert.onnx"
    if not (out / "g2pw.onnx").is_file():
        r, k = shapes.g2pw_rows, shapes.g2pw_tokens
        ints = torch.ones(r, k, dtype=torch.int32)
        export._export(
            G2pwBody(_bert(BERT_BASE)),
            (ints, ints.clone(), ints.clone(), torch.zeros(r, dtype=torch.int32)),
            ["input_ids", "token_type_ids", "attention_mask", "position_ids"],
            ["hidden"],
            out / "g2pw.onnx",
        )
    paths["g2pw"] = out / "g2pw.onnx"
    return paths
