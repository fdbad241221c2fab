"""T2S static-split contract: masks, sizing, and static graph math vs upstream's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from scripts.gptsovits.models.checkpoints import GptCheckpoint
from scripts.gptsovits.models.t2s import T2SDims, T2SModel, sine_table
from scripts.gptsovits.models.t2s_graphs import (
    T2SDecode,
    T2SPrefill,
    decode_mask,
    prefill_mask,
)
from scripts.gptsovits.shapes import MASK_VALUE
from scripts.gptsovits.synthetic.voice import tiny_gpt_config


def test_prefill_mask_structure() -> None:
    m = prefill_mask(n_text=3, n_audio=2, length=7)[0, 0]
    allowed = m == 0
    assert m.dtype == np.float32 and set(np.unique(m)) == {0.0, MASK_VALUE}
    assert allowed[:3, :3].all() and not allowed[:3, 3:].any()  # text never sees audio
    assert allowed[3:5, :3].all()  # audio sees all text
    assert allowed[3, 3] and not allowed[3, 4] and allowed[4, 3:5].all()  # causal
    assert not allowed[5:].any() and not allowed[:, 5:].any()  # padding


def test_prefill_mask_overflow() -> None:
    with pytest.raises(ValueError, match="exceed P=8"):
        prefill_mask(5, 4, 8)


def test_decode_mask() -> None:
    m = decode_mask(3, 6)
    assert m.shape == (1, 1, 1, 6)
    assert m[0, 0, 0].tolist() == [0, 0, 0, MASK_VALUE, MASK_VALUE, MASK_VALUE]
    with pytest.raises(ValueError, match="exceed the KV length"):
        decode_mask(7, 6)


def test_sine_table_interleaved() -> None:
    pe = sine_table(5, 8)
    assert torch.allclose(pe[:, 0], torch.sin(torch.arange(5.0)))
    assert torch.allclose(pe[:, 1], torch.cos(torch.arange(5.0)))
    assert torch.allclose(pe[2, 2], torch.sin(torch.tensor(2.0) * 10000 ** (-2 / 8)))


def test_dims_from_config_and_errors() -> None:
    weights = {"bert_proj.weight": torch.zeros(64, 32)}
    dims = T2SDims.from_checkpoint(GptCheckpoint(tiny_gpt_config(), weights, ""))
    assert (dims.layers, dims.heads, dims.head_dim, dims.bert_dim) == (2, 4, 16, 32)
    bad = tiny_gpt_config()
    bad["model"]["EOS"] = 7
    with pytest.raises(ValueError, match="inconsistent"):
        T2SDims.from_checkpoint(GptCheckpoint(bad, weights, ""))
    del bad["model"]["head"]
    with pytest.raises(ValueError, match="lack 'head'"):
        T2SDims.from_checkpoint(GptCheckpoint(bad, weights, ""))


def test_static_graph_modules_match_reference(t2s_model: T2SModel) -> None:
    """Padded prefill + masked cache decode (torch) equal the growing-cache path."""
    d, p, length = t2s_model.dims, 16, 24
    g = torch.Generator().manual_seed(3)
    phones = torch.randint(0, d.phone_vocab, (5,), generator=g)
    bert = torch.randn(d.bert_dim, 5, generator=g)
    prompt = torch.randint(0, d.eos, (4,), generator=g)
    tokens = torch.randint(0, d.eos, (3,), generator=g)
    ref = t2s_model.reference_logits(phones, bert, prompt, tokens)
    with torch.no_grad():
        xy = torch.zeros(1, p, d.dim)
        xy[:, :9] = torch.cat(
            [t2s_model.embed_text(phones, bert), t2s_model.embed_audio(prompt, 0)], 1
        )
        h, k, v = T2SPrefill(t2s_model)(xy, torch.from_numpy(prefill_mask(5, 4, p)))
        out = [t2s_model.ar_predict_layer(h[0, 8])]
        kc = torch.zeros(d.layers, d.heads, length, d.head_dim)
        vc = torch.zeros_like(kc)
        kc[:, :, :9], vc[:, :, :9] = k[:, :, :9], v[:, :, :9]
        for i in range(3):
            x = t2s_model.embed_audio(tokens[i : i + 1], 4 + i)
            mask = torch.from_numpy(decode_mask(9 + i, length))
            logits, k_new, v_new = T2SDecode(t2s_model)(x, kc, vc, mask)
            kc[:, :, 9 + i], vc[:, :, 9 + i] = k_new[:, :, 0], v_new[:, :, 0]
            out.append(logits[0])
    torch.testing.assert_close(torch.stack(out), ref, rtol=1e-5, atol=1e-5)
