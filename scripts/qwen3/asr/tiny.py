"""A tiny random Qwen3-ASR checkpoint, written by upstream's own classes.

``write_tiny_model(dir)`` lays out a Hugging Face directory as
Qwen/Qwen3-ASR-0.6B has it (config.json, model.safetensors, tokenizer files,
preprocessor_config.json, chat template, generation_config.json), with tiny dims
(the team contract) and a byte-level BPE trained on a fixed English + Chinese
corpus (scripts/qwen3/common/tiny_bpe.py). The same seed gives the same bytes.
Tests and scripts only: it imports qwen_asr (the ``oracle`` extra), never the
board runtime.

Greedy runs of seed 0 give varied tokens but never EOS (cap max_new_tokens);
those of seed 1 stop by themselves after 8-60 tokens on many clips.

``Shape`` is the writer's parameters: ``TINY`` the contract's, ``ODD`` an
unfriendly one upstream's config still accepts (odd widths, text hidden 45 not
heads x head_dim, RoPE halves of 7, 97 mels, 3-chunk windows, the special
tokens at ids 8..0, and embedding / LM-head rows past the tokenizer's, as the
real checkpoints' 151,936 rows outnumber their tokenizers' tokens).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from scripts.qwen3.common import tiny_bpe, tiny_dims

#: The special tokens of the Qwen3 family (docs/qwen3.md, tiny models), appended after
#: the BPE vocabulary in this order, as the real vocabulary has them after its merges.
SPECIAL_TOKENS: Final = (*tiny_bpe.TURN_AND_AUDIO, *tiny_bpe.TTS_TOKENS)
#: Added but NOT special: upstream decodes with skip_special_tokens=True and then
#: splits at this tag (inference/utils.py:parse_asr_output).
ASR_TEXT_TAG: Final = tiny_bpe.ASR_TEXT
#: BPE size before the added tokens: 256 byte symbols plus some merges.
BPE_VOCAB: Final = 400
#: The checkpoint chat template as upstream renders it (docs/qwen3.md, ASR prompt and
#: special ids): a system turn with the context (may be empty), a user turn whose audio
#: item is <|audio_start|><|audio_pad|><|audio_end|>, then the generation prompt.
CHAT_TEMPLATE: Final = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' }}"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for item in message['content'] %}"
    "{% if item['type'] == 'audio' %}"
    "{{ '<|audio_start|><|audio_pad|><|audio_end|>' }}"
    "{% elif item['type'] == 'text' %}{{ item['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
    "{{ '<|im_end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
#: What the tokenizer learns from: the prompt words, every upstream language
#: name (``language X``), and short English and Chinese sentences.
_CORPUS: Final = (
    "system user assistant language None",
    "The quick brown fox jumps over the lazy dog.",
    "Hello, how are you today? I am fine, thank you.",
    "Please turn on the kitchen lights and set the timer for ten minutes.",
    "What is the weather like in Berlin tomorrow morning?",
    "This is a test of the speech recognition system, one two three.",
    "今天天气很好，我们去公园散步吧。",
    "你好，请问现在几点了？",
    "我喜欢听音乐，也喜欢看书。",
    "请把客厅的灯打开，谢谢。",
    "语音识别系统正在测试中，一二三四五。",
)
#: Tiny dims (team contract): 13 tokens per 100-frame chunk, 4 chunks a window.
AUDIO_DIMS: Final[dict[str, Any]] = {
    "num_mel_bins": 128,
    "encoder_layers": 2,
    "encoder_attention_heads": 4,
    "encoder_ffn_dim": 128,
    "d_model": 64,
    "downsample_hidden_size": 16,
    # the length formula hard-codes 100-frame chunks (docs/qwen3.md, tiny models)
    "n_window": 50,
    "n_window_infer": 400,
    "max_source_positions": 1500,
    "output_dim": 64,
}
TEXT_DIMS: Final[dict[str, Any]] = {
    **tiny_dims.DECODER,
    "rope_scaling": {**tiny_dims.MROPE, "mrope_interleaved": True},
    "max_position_embeddings": tiny_dims.MAX_POSITIONS,
    "tie_word_embeddings": False,
}
#: Init scales (docs/qwen3.md, export findings: the default init gives
#: near-constant outputs): weights variance-preserving, norms 1 + N(0, NORM_JITTER),
#: biases N(0, BIAS_STD); the LM head gets HEAD_GAIN so the logits spread over several
#: units.
NORM_JITTER: Final = 0.1
BIAS_STD: Final = 0.05
HEAD_GAIN: Final = 4.0
EMBED_STD: Final = 1.0


@dataclass(frozen=True)
class Shape:
    """The writer's parameters: dims, vocabulary size and where ids sit."""

    name: str
    audio: dict[str, Any] = field(default_factory=lambda: dict(AUDIO_DIMS))
    text: dict[str, Any] = field(default_factory=lambda: dict(TEXT_DIMS))
    bpe_vocab: int = BPE_VOCAB
    #: config vocab_size rows past the tokenizer's (the tokenizer never gives them)
    vocab_padding: int = 0
    #: the special tokens in id order ...
    specials: tuple[str, ...] = SPECIAL_TOKENS
    #: ... at ids 0.. before the byte symbols, or (False) after the merges
    specials_first: bool = False


TINY: Final = Shape("tiny")
#: Rows past the tokenizer's in ODD: odd, and a few percent of its vocabulary,
#: so greedy runs of random weights pick some of them.
ODD_PADDING: Final = 7
ODD: Final = Shape(
    "odd",
    audio={
        **AUDIO_DIMS,
        "num_mel_bins": 97,
        "encoder_layers": 3,
        "encoder_attention_heads": 3,
        "encoder_ffn_dim": 75,
        "d_model": 42,  # even: upstream's sinusoid table needs it
        "downsample_hidden_size": 15,
        "n_window_infer": 300,  # a multiple of the 100-frame chunks
        "output_dim": 45,
    },
    text={
        **TEXT_DIMS,
        "hidden_size": 45,
        "intermediate_size": 53,
        "num_hidden_layers": 3,
        "num_attention_heads": 3,
        "num_key_value_heads": 1,
        "head_dim": 14,
        "rope_scaling": {**TEXT_DIMS["rope_scaling"], "mrope_section": [3, 2, 2]},
    },
    bpe_vocab=397,
    vocab_padding=ODD_PADDING,
    specials=SPECIAL_TOKENS[::-1],
    specials_first=True,
)
SHAPES: Final = {s.name: s for s in (TINY, ODD)}


def train_tokenizer(shape: Shape = TINY) -> Any:
    """The tiny byte-level BPE in Qwen2TokenizerFast, with upstream's extras."""
    from qwen_asr.inference.utils import SUPPORTED_LANGUAGES

    corpus = [*_CORPUS, *(f"language {name}" for name in SUPPORTED_LANGUAGES)]
    return tiny_bpe.train_tokenizer(
        corpus,
        shape.bpe_vocab,
        shape.specials,
        specials_first=shape.specials_first,
        added=(ASR_TEXT_TAG,),
        extra_special_tokens={
            "audio_token": "<|audio_pad|>",
            "audio_bos_token": "<|audio_start|>",
            "audio_eos_token": "<|audio_end|>",
        },
    )


def _perturb(model: Any, seed: int) -> None:
    """Re-draw every parameter from one generator, so nothing is trivially 0/1."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            noise = torch.randn(p.shape, generator=gen, dtype=torch.float32)
            if name.endswith("bias"):
                p.copy_(BIAS_STD * noise)
            elif p.ndim == 1:  # LayerNorm / RMSNorm gains
                p.copy_(1.0 + NORM_JITTER * noise)
            elif "embed_tokens" in name:
                p.copy_(EMBED_STD * noise)
            else:
                fan_in = p[0].numel()
                gain = HEAD_GAIN if name.endswith("lm_head.weight") else 1.0
                p.copy_(gain * noise / fan_in**0.5)


def build(seed: int = 0, shape: Shape = TINY) -> tuple[Any, Any]:
    """The tiny (model, processor), fp32 and eval, not yet saved."""
    from qwen_asr.core.transformers_backend import (
        Qwen3ASRConfig,
        Qwen3ASRForConditionalGeneration,
        Qwen3ASRProcessor,
    )
    from qwen_asr.inference.utils import SUPPORTED_LANGUAGES
    from transformers import WhisperFeatureExtractor

    tok = train_tokenizer(shape)
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    text = {**shape.text, "vocab_size": len(tok) + shape.vocab_padding}
    config = Qwen3ASRConfig(
        thinker_config={
            "audio_config": dict(shape.audio),
            "text_config": text,
            "audio_token_id": ids["<|audio_pad|>"],
            "audio_start_token_id": ids["<|audio_start|>"],
        },
        support_languages=list(SUPPORTED_LANGUAGES),
        torch_dtype="float32",
    )
    model = Qwen3ASRForConditionalGeneration(config).float().eval()
    _perturb(model, seed)
    eos = [ids["<|im_end|>"], ids["<|endoftext|>"]]
    gen = model.generation_config
    gen.eos_token_id, gen.pad_token_id, gen.do_sample = eos, eos[1], False
    fe = WhisperFeatureExtractor(feature_size=shape.audio["num_mel_bins"])
    processor = Qwen3ASRProcessor(
        feature_extractor=fe, tokenizer=tok, chat_template=CHAT_TEMPLATE
    )
    return model, processor


def write_tiny_model(out: Path | str, seed: int = 0, shape: Shape = TINY) -> Path:
    """Write the tiny checkpoint directory ``out`` and return it."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    model, processor = build(seed, shape)
    model.save_pretrained(out, safe_serialization=True)
    processor.save_pretrained(out)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the model directory to write")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--shape", choices=sorted(SHAPES), default=TINY.name)
    args = parser.parse_args(argv)
    out = write_tiny_model(args.out, args.seed, SHAPES[args.shape])
    for path in sorted(out.iterdir()):
        print(f"{path.stat().st_size:>10}  {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
