"""The synthetic voice looks like an upstream installation after training."""

from __future__ import annotations

import ast
import wave

import torch

from scripts.gptsovits.synthetic.voice import (
    CLIP_TEXTS,
    SAMPLE_RATE,
    TINY_BERT_DIM,
    TINY_SV,
    SyntheticVoice,
    semantic_length,
)


def test_layout(synthetic_voice: SyntheticVoice) -> None:
    root, exp = synthetic_voice.root, synthetic_voice.exp
    assert synthetic_voice.gpt_ckpt == root / "GPT_weights_v2Pro" / f"{exp}-e2.ckpt"
    assert (
        synthetic_voice.sovits_pth
        == root / "SoVITS_weights_v2Pro" / f"{exp}_e2_s16.pth"
    )
    assert synthetic_voice.logs_dir == root / "logs" / exp


def test_training_folder_formats(synthetic_voice: SyntheticVoice) -> None:
    logs = synthetic_voice.logs_dir
    text = (logs / "2-name2text.txt").read_text(encoding="utf8").splitlines()
    sem = (logs / "6-name2semantic.tsv").read_text(encoding="utf8").splitlines()
    assert sem[0] == "item_name\tsemantic_audio"
    assert len(text) == len(sem) - 1 == len(CLIP_TEXTS)
    for line, sem_line in zip(text, sem[1:], strict=True):
        name, phones, word2ph, norm = line.split("\t")
        n_phones = len(phones.split())
        counts = ast.literal_eval(word2ph)
        assert sum(counts) == n_phones and len(counts) == len(norm)
        bert = torch.load(logs / "3-bert" / f"{name}.pt")
        assert bert.shape == (TINY_BERT_DIM, n_phones)
        assert torch.load(logs / "7-sv_cn" / f"{name}.pt").shape == (1, TINY_SV)
        with wave.open(str(logs / "5-wav32k" / name)) as w:
            assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (
                SAMPLE_RATE,
                1,
                2,
            )
            seconds = w.getnframes() / SAMPLE_RATE
            assert 3.0 <= seconds <= 10.0
            codes = sem_line.split("\t")[1].split()
            assert sem_line.split("\t")[0] == name
            assert len(codes) == semantic_length(w.getnframes())
            assert all(0 <= int(c) < 1024 for c in codes)


def test_semantic_length_matches_upstream_rate() -> None:
    # 3 s at 16 kHz: (48000 - 400) // 320 + 1 = 149 HuBERT frames -> 74 tokens.
    assert semantic_length(3 * SAMPLE_RATE) == 74


def test_tiny_pretrained_models(synthetic_voice: SyntheticVoice) -> None:
    """Laid out like chinese-roberta-wwm-ext-large and G2PWModel_1.1."""
    import json

    from daemon.engines.gptsovits.frontend import CharVocab, G2pwTables

    config = json.loads((synthetic_voice.bert_dir / "config.json").read_text())
    assert config["hidden_size"] == TINY_BERT_DIM
    assert config["num_hidden_layers"] == 4  # hidden_states[-3] = layer 2
    vocab = CharVocab(synthetic_voice.bert_dir / "vocab.txt")
    assert vocab.encode("你好") != [vocab.unk, vocab.unk]
    tables = G2pwTables.from_dir(synthetic_voice.g2pw_dir)
    assert tables.to_pinyin("ㄏㄤ2") == "hang2"
    assert (synthetic_voice.g2pw_dir / "g2pW.onnx").is_file()
