"""The tiny model's text parts: the GPT's SentencePiece ``bpe.model`` and the
Qwen3 emotion classifier directory (``qwen0.6bemo4-merge/``).

Both are trained or drawn here, deterministically: SentencePiece on one thread
over a fixed corpus, the Qwen weights from a seed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

#: The BPE's vocabulary size (the real bpe.model has 12000): also config.yaml's
#: gpt.number_text_tokens, as in the real model.
BPE_VOCAB: Final = 97
#: Upstream's TextTokenizer fixes <s>=0 and </s>=1 (utils/front.py bos/eos ids),
#: which are also gpt.start_text_token / stop_text_token.
_BOS, _EOS, _UNK = 0, 1, 2
#: Normalised training text: upstream upper-cases Latin text and spaces out CJK
#: characters before the BPE (utils/common.tokenize_by_CJK_char), so the corpus
#: is written that way.
_CORPUS: Final = (
    "HELLO WORLD, THIS IS A TINY VOICE.",
    "THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG!",
    "TWENTY THREE CATS SAT ON A MAT? YES, THEY DID.",
    "SHE SELLS SEA SHELLS BY THE SEA SHORE.",
    "PACK MY BOX WITH FIVE DOZEN LIQUOR JUGS.",
    "你 好 世 界 , 今 天 天 气 很 好 。",
    "我 们 一 起 去 公 园 散 步 吧 !",
    "HOW VEXINGLY QUICK DAFT ZEBRAS JUMP - WHAT'S UP?",
)

#: The emotion model's chat tokens (Qwen3's), its BPE size and shape.
_IM_START, _IM_END, _EOT = "<|im_start|>", "<|im_end|>", "<|endoftext|>"
_QWEN_BPE: Final = 300  # > 256: byte-level BPE keeps every byte as a token
#: Qwen3's chat layout, reduced to what QwenEmotion.inference sends: a system and
#: a user turn, the generation prompt and an empty think block when
#: enable_thinking is false (as the real template renders it).
_CHAT_TEMPLATE: Final = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if enable_thinking is defined and enable_thinking is false %}"
    "<think>\n\n</think>\n\n{% endif %}{% endif %}"
)


def write_bpe(path: Path) -> None:
    """Train bpe.model (SentencePiece BPE, BPE_VOCAB pieces) on _CORPUS."""
    import io

    import sentencepiece as spm

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(_CORPUS),
        model_writer=model,
        model_type="bpe",
        vocab_size=BPE_VOCAB,
        character_coverage=1.0,
        bos_id=_BOS,
        eos_id=_EOS,
        unk_id=_UNK,
        pad_id=-1,
        num_threads=1,
        minloglevel=2,
    )
    path.write_bytes(model.getvalue())


def write_qwen_emotion(out: Path, seed: int) -> None:
    """A Qwen3ForCausalLM of one small layer and its byte-level BPE tokenizer,
    saved as transformers saves them (config.json, model.safetensors,
    tokenizer.json, vocab.json, merges.txt, tokenizer_config.json)."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import Qwen3Config, Qwen3ForCausalLM

    out.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = [_EOT, _IM_START, _IM_END]
    trainer = trainers.BpeTrainer(
        vocab_size=_QWEN_BPE,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(list(_CORPUS) + ["文本情感分类", '{"高兴": 0.5}'], trainer)
    tok.save(str(out / "tokenizer.json"))
    tok.model.save(str(out))  # vocab.json and merges.txt, as the real directory has
    ids = {s: tok.token_to_id(s) for s in specials}
    added = {
        str(i): {"content": s, "special": True, "normalized": False}
        for s, i in ids.items()
    }
    tcfg = {
        "tokenizer_class": "Qwen2Tokenizer",
        "added_tokens_decoder": added,
        "bos_token": None,
        "eos_token": _IM_END,
        "pad_token": _EOT,
        "unk_token": None,
        "chat_template": _CHAT_TEMPLATE,
        "model_max_length": 512,
        "clean_up_tokenization_spaces": False,
    }
    (out / "tokenizer_config.json").write_text(json.dumps(tcfg, indent=1))
    torch.manual_seed(seed)
    cfg = Qwen3Config(
        vocab_size=tok.get_vocab_size(),
        hidden_size=24,
        intermediate_size=37,
        num_hidden_layers=1,
        num_attention_heads=3,
        num_key_value_heads=1,
        head_dim=8,
        max_position_embeddings=512,
        tie_word_embeddings=True,  # as Qwen3-0.6B
        bos_token_id=ids[_EOT],
        eos_token_id=ids[_IM_END],
        pad_token_id=ids[_EOT],
    )
    Qwen3ForCausalLM(cfg).eval().save_pretrained(out)
