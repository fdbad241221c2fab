"""The generic Qwen3 decoder wrappers against upstream's torch forward (no ONNX)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from scripts.qwen3.common.decoder import Decode, Prefill, Qwen3Stack, RmsNorm

MASK = -100.0
Rope = tuple[torch.Tensor, torch.Tensor]


def _stack(model: Any, head: bool = True) -> Qwen3Stack:
    t = model.thinker
    return Qwen3Stack(t.model.layers, t.model.norm, t.lm_head if head else None)


def _rope(model: Any, n: int) -> Rope:
    ids = torch.arange(n).reshape(1, 1, -1).expand(3, 1, -1)
    return model.thinker.model.rotary_emb(torch.zeros(1), ids)


def _upstream(model: Any, x: torch.Tensor) -> Any:
    with torch.no_grad():
        return model.thinker(
            inputs_embeds=x,
            attention_mask=torch.ones(1, x.shape[1], dtype=torch.long),
            output_hidden_states=True,
        )


def _run(
    stack: Qwen3Stack, x: torch.Tensor, n: int, pad: int, rope: Rope
) -> torch.Tensor:
    """Prefill n positions (padded to n + pad), then decode the rest one by one."""
    s, p = x.shape[1], n + pad
    cos, sin = rope
    xp = torch.zeros(1, p, x.shape[2])
    xp[0, :n] = x[0, :n]
    mask = torch.full((1, 1, p, p), MASK).triu(1)
    mask[..., n:, :] = MASK
    mask[..., :, n:] = MASK
    last = torch.zeros(1, p)
    last[0, n - 1] = 1.0
    with torch.no_grad():
        logits, k, v = Prefill(stack)(xp, mask, cos[:, :p], sin[:, :p], last)
        length = s + 3
        kc = torch.zeros(*k.shape[:2], length, k.shape[3])
        vc = kc.clone()
        kc[:, :, :n], vc[:, :, :n] = k[:, :, :n], v[:, :, :n]
        row = torch.full((1, 1, 1, length), MASK)
        row[..., :n] = 0.0
        out = [logits]
        for pos in range(n, s):
            step = Decode(stack)(
                x[:, pos : pos + 1],
                kc,
                vc,
                row,
                cos[:, pos : pos + 1],
                sin[:, pos : pos + 1],
            )
            logits, k_new, v_new = step
            kc[:, :, pos], vc[:, :, pos] = k_new[:, :, 0], v_new[:, :, 0]
            row[..., pos] = 0.0
            out.append(logits)
    return torch.cat(out)


@pytest.fixture(scope="module")
def rope(asr_model: Any) -> Rope:
    return _rope(asr_model, 64)


def test_rms_norm_without_pow_equals_upstream(asr_model: Any) -> None:
    norm = asr_model.thinker.model.layers[0].self_attn.q_norm
    x = torch.randn(5, 3, norm.weight.shape[0]) * 3
    with torch.no_grad():
        torch.testing.assert_close(RmsNorm(norm)(x), norm(x), rtol=1e-6, atol=1e-6)


def test_prefill_then_decode_steps_equal_the_upstream_forward(
    asr_model: Any, rope: Rope
) -> None:
    """Padded prefill (GQA groups of 2) + cached steps = one upstream forward."""
    stack = _stack(asr_model)
    assert stack.dims.heads > stack.dims.kv_heads  # GQA is exercised
    x = torch.randn(
        1, 17, stack.dims.hidden, generator=torch.Generator().manual_seed(0)
    )
    want = _upstream(asr_model, x).logits[0, 11:].numpy()
    got = _run(stack, x, n=12, pad=5, rope=rope).numpy()
    assert np.abs(got - want).max() / np.abs(want).max() < 1e-5
    assert (got.argmax(-1) == want.argmax(-1)).all()


def test_without_a_head_the_stack_gives_the_final_normed_hidden(
    asr_model: Any, rope: Rope
) -> None:
    """head=None (Qwen3-TTS's code predictor): the output is upstream's last
    hidden state (after the final norm)."""
    stack = _stack(asr_model, head=False)
    assert stack.dims.vocab is None
    x = torch.randn(1, 9, stack.dims.hidden, generator=torch.Generator().manual_seed(1))
    want = _upstream(asr_model, x).hidden_states[-1][0, 5:].numpy()
    got = _run(stack, x, n=6, pad=2, rope=rope).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_hidden_option_adds_the_normed_hidden_and_keeps_logits_and_kv(
    asr_model: Any, rope: Rope
) -> None:
    """hidden=True (Qwen3-TTS's talker): outputs logits, h, k, v; logits and
    K/V are the plain graphs' own, and h is upstream's final-normed hidden of
    the selected row (prefill) or the step (decode)."""
    stack = _stack(asr_model)
    n, p = 6, 8
    x = torch.randn(1, p, stack.dims.hidden, generator=torch.Generator().manual_seed(2))
    up = _upstream(asr_model, x[:, : n + 1])
    cos, sin = rope
    mask = torch.full((1, 1, p, p), MASK).triu(1)
    last = torch.zeros(1, p)
    last[0, n - 1] = 1.0
    args = (x, mask, cos[:, :p], sin[:, :p], last)
    with torch.no_grad():
        plain = Prefill(stack)(*args)
        logits, h, k, v = Prefill(stack, hidden=True)(*args)
    for a, b in zip(plain, (logits, k, v)):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    want = up.hidden_states[-1][0, n - 1 : n]
    torch.testing.assert_close(h, want, rtol=1e-5, atol=1e-5)
    length = 10
    kc = torch.zeros(*k.shape[:2], length, k.shape[3])
    vc = kc.clone()
    kc[:, :, :n], vc[:, :, :n] = k[:, :, :n], v[:, :, :n]
    row = torch.full((1, 1, 1, length), MASK)
    row[..., :n] = 0.0
    step = (x[:, n : n + 1], kc, vc, row, cos[:, n : n + 1], sin[:, n : n + 1])
    with torch.no_grad():
        plain = Decode(stack)(*step)
        logits, h, k_new, v_new = Decode(stack, hidden=True)(*step)
    for a, b in zip(plain, (logits, k_new, v_new)):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    torch.testing.assert_close(
        h, up.hidden_states[-1][0, n : n + 1], rtol=1e-5, atol=1e-5
    )
    torch.testing.assert_close(logits, up.logits[0, n : n + 1], rtol=1e-4, atol=1e-5)
