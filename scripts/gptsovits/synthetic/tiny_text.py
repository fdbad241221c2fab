"""Tiny random-weight stand-ins for the two pretrained text models of a voice.

The real ones (chinese-roberta-wwm-ext-large, HF format; G2PWModel_1.1 with
g2pW.onnx) cannot be downloaded here, so the test voice gets models of the same
architecture and file layout with tiny dims:

- ``bert/``: a transformers BertModel directory (config.json, weights, vocab.txt)
  like chinese-roberta-wwm-ext-large, with ``BERT_LAYERS + 2`` layers so that
  hidden_states[-3] is the output of layer ``BERT_LAYERS``.
- ``G2PWModel/``: g2pW.onnx exported the way g2pW's own export looks (BERT body +
  POS classifier + descriptor tables + weighted softmax; int64 inputs
  input_ids, token_type_ids, attention_mask, phoneme_mask, char_ids,
  position_ids; output probabilities), plus the dictionary files upstream reads
  (POLYPHONIC_CHARS.txt, MONOPHONIC_CHARS.txt, bopomofo_to_pinyin_wo_tune_dict.json,
  char_bopomofo_dict.json, config.py). Facts: docs/gpt-sovits.md, g2pW.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import torch
from torch import Tensor, nn

# g2pW's POS tag set (onnx_api.py pos_tags): the second-order table has
# n_chars * len(POS_TAGS) rows.
POS_TAGS = ("UNK", "A", "C", "D", "I", "N", "P", "T", "V", "DE", "SHI")
# Clip of g2pW's weighted softmax.
G2PW_EPS = 1e-6
# g2pW was exported with opset 11 (onnxruntime 1.x era); keep that.
G2PW_OPSET = 11
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")

# Tiny dims: distinct from every other tiny width so swaps show.
TINY_G2PW_HIDDEN = 40
TINY_BERT_HEADS, TINY_G2PW_HEADS = 2, 2
# Weight scale x fan_in^-0.5: mixes tokens visibly without the near-one-hot
# attention of untrained wide weights (which fp16 cannot follow; trained models
# do not have it either).
WEIGHT_GAIN = 0.5

# A few real polyphones (traditional chars, bopomofo + tone) and monophones.
POLYPHONES = (
    ("行", "ㄒㄧㄥ2"),
    ("行", "ㄏㄤ2"),
    ("長", "ㄔㄤ2"),
    ("長", "ㄓㄤ3"),
    ("好", "ㄏㄠ3"),
    ("好", "ㄏㄠ4"),
    ("看", "ㄎㄢ4"),
    ("看", "ㄎㄢ1"),
    ("還", "ㄏㄞ2"),
    ("還", "ㄏㄨㄢ2"),
    ("重", "ㄓㄨㄥ4"),
    ("重", "ㄔㄨㄥ2"),
)
MONOPHONES = (
    ("你", "ㄋㄧ3"),
    ("我", "ㄨㄛ3"),
    ("世", "ㄕ4"),
    ("界", "ㄐㄧㄝ4"),
    ("們", "ㄇㄣ5"),
)
BOPOMOFO_TO_PINYIN = {
    "ㄒㄧㄥ": "xing",
    "ㄏㄤ": "hang",
    "ㄔㄤ": "chang",
    "ㄓㄤ": "zhang",
    "ㄏㄠ": "hao",
    "ㄎㄢ": "kan",
    "ㄏㄞ": "hai",
    "ㄏㄨㄢ": "huan",
    "ㄓㄨㄥ": "zhong",
    "ㄔㄨㄥ": "chong",
    "ㄋㄧ": "ni",
    "ㄨㄛ": "wo",
    "ㄕ": "shi",
    "ㄐㄧㄝ": "jie",
    "ㄇㄣ": "men",
}
# Chars of the vocabulary besides the specials: ASCII punctuation the Chinese
# normalizer keeps, and a small everyday character set (simplified and the
# traditional forms g2pW sees).
VOCAB_CHARS = (
    "!,-.?…"
    "你好世界我们一起去看吧小孩儿在玩的是了不有人这中大为上个国和地到以说时要就出会"
    "也子可对生能而那得于着下自之年过发后作里用道行所然家种事成方多经么去法学如都同现"
    "长还重們長還為"
)


def vocab_tokens() -> list[str]:
    chars = list(dict.fromkeys(VOCAB_CHARS + "".join(c for c, _ in POLYPHONES)))
    return [*SPECIAL_TOKENS, *chars]


def write_vocab(path: Path) -> int:
    tokens = vocab_tokens()
    path.write_text("\n".join(tokens) + "\n", encoding="utf-8")
    return len(tokens)


def _bert_config(vocab: int, hidden: int, layers: int, heads: int, positions: int):
    from transformers import BertConfig

    return BertConfig(
        vocab_size=vocab,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=2 * hidden,
        max_position_embeddings=positions,
        type_vocab_size=2,
        attn_implementation="eager",
    )


def _randomize(module: nn.Module, seed: int) -> None:
    """BERT's init (std 0.02) makes every layer nearly the identity; wider weights
    make the parity gates see real nonlinear mixing."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            if "LayerNorm.weight" in name:
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
            elif p.dim() >= 2:
                p.copy_(
                    torch.randn(p.shape, generator=g)
                    * WEIGHT_GAIN
                    * p.shape[-1] ** -0.5
                )
            else:
                p.copy_(0.05 * torch.randn(p.shape, generator=g))


def write_tiny_bert(
    out: Path, hidden: int, graph_layers: int, positions: int, seed: int = 0
) -> Path:
    """A chinese-roberta-shaped HF directory; hidden_states[-3] = layer
    `graph_layers` (the real model: 24 layers, graph 22)."""
    from transformers import BertModel

    out.mkdir(parents=True, exist_ok=True)
    vocab = write_vocab(out / "vocab.txt")
    config = _bert_config(
        vocab, hidden, graph_layers + 2, TINY_BERT_HEADS, max(positions, 64)
    )
    torch.manual_seed(seed)
    model = BertModel(config, add_pooling_layer=False).eval()
    _randomize(model, seed)
    model.save_pretrained(out)
    return out


class TinyG2pw(nn.Module):
    """g2pW's model (BERT + POS classifier + descriptors + weighted softmax)."""

    def __init__(self, config, n_labels: int, n_chars: int) -> None:
        from transformers import BertModel

        super().__init__()
        self.n_pos = len(POS_TAGS)
        self.bert = BertModel(config, add_pooling_layer=False)
        h = config.hidden_size
        self.pos_classifier = nn.Linear(h, self.n_pos)
        self.descriptor_bias = nn.Embedding(1, n_labels)
        self.char_descriptor = nn.Embedding(n_chars, n_labels)
        self.second_order_descriptor = nn.Embedding(n_chars * self.n_pos, n_labels)
        self.classifier = nn.Linear(h, n_labels)

    def forward(
        self,
        input_ids: Tensor,
        token_type_ids: Tensor,
        attention_mask: Tensor,
        phoneme_mask: Tensor,
        char_ids: Tensor,
        position_ids: Tensor,
    ) -> Tensor:
        seq = self.bert(
            input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).last_hidden_state
        rows = torch.arange(input_ids.shape[0])
        hidden = seq[rows, position_ids]
        pos = self.pos_classifier(hidden).argmax(dim=-1)
        desc = (
            self.descriptor_bias(torch.zeros_like(char_ids))
            + self.char_descriptor(char_ids)
            + self.second_order_descriptor(char_ids * self.n_pos + pos)
        )
        weights = phoneme_mask * torch.sigmoid(desc)
        logits = self.classifier(hidden)
        scaled = torch.exp(logits - logits.max(dim=-1, keepdim=True).values) * weights
        probs = scaled / scaled.sum(dim=-1, keepdim=True)
        return probs.clamp(G2PW_EPS, 1 - G2PW_EPS)


def write_tiny_g2pw(out: Path, seed: int = 0) -> Path:
    """G2PWModel/ with a tiny g2pW.onnx and the dictionary files."""
    out.mkdir(parents=True, exist_ok=True)
    vocab = write_vocab(out / "vocab.txt")
    (out / "POLYPHONIC_CHARS.txt").write_text(
        "\n".join(f"{c}\t{b}" for c, b in POLYPHONES) + "\n", encoding="utf-8"
    )
    (out / "MONOPHONIC_CHARS.txt").write_text(
        "\n".join(f"{c}\t{b}" for c, b in MONOPHONES) + "\n", encoding="utf-8"
    )
    (out / "bopomofo_to_pinyin_wo_tune_dict.json").write_text(
        json.dumps(BOPOMOFO_TO_PINYIN, ensure_ascii=False), encoding="utf-8"
    )
    char_bopomofo: dict[str, list[str]] = {}
    for c, b in POLYPHONES + MONOPHONES:
        char_bopomofo.setdefault(c, []).append(b)
    (out / "char_bopomofo_dict.json").write_text(
        json.dumps(char_bopomofo, ensure_ascii=False), encoding="utf-8"
    )
    # g2pW's config.py keys that onnx_api.py reads (model_source, use_mask,
    # use_char_phoneme); the real file has training settings too.
    (out / "config.py").write_text(
        'model_source = "bert-base-chinese"\nuse_mask = True\n'
        "use_char_phoneme = False\nwindow_size = None\n",
        encoding="utf-8",
    )
    labels = sorted({b for _, b in POLYPHONES})
    chars = sorted({c for c, _ in POLYPHONES})
    config = _bert_config(vocab, TINY_G2PW_HIDDEN, 2, TINY_G2PW_HEADS, 512)
    torch.manual_seed(seed)
    model = TinyG2pw(config, len(labels), len(chars)).eval()
    _randomize(model, seed)
    rows, tokens = 2, 7
    args = (
        torch.randint(5, vocab, (rows, tokens)),
        torch.zeros(rows, tokens, dtype=torch.long),
        torch.ones(rows, tokens, dtype=torch.long),
        torch.ones(rows, len(labels)),
        torch.zeros(rows, dtype=torch.long),
        torch.ones(rows, dtype=torch.long),
    )
    names = [
        "input_ids",
        "token_type_ids",
        "attention_mask",
        "phoneme_mask",
        "char_ids",
        "position_ids",
    ]
    dynamic = {n: {0: "batch", 1: "seq"} for n in names[:3]}
    dynamic.update({"phoneme_mask": {0: "batch"}, "char_ids": {0: "batch"}})
    dynamic.update({"position_ids": {0: "batch"}, "probs": {0: "batch"}})
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            args,
            str(out / "g2pW.onnx"),
            dynamo=False,
            input_names=names,
            output_names=["probs"],
            dynamic_axes=dynamic,
            opset_version=G2PW_OPSET,
            do_constant_folding=True,
        )
    return out
