"""The emotion vector's CPU arithmetic against upstream: merge_emovec on the
emotion_vector port's outputs equals UnifiedVoice.merge_emovec; the eight
weights' path equals infer_v2's expressions (transcribed below, with
upstream's own find_most_similar_cosine); the weights' scaling truncates as
upstream does."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from indextts.emotion import find_most_similar_cosine
from indextts.gpt.model_v2 import UnifiedVoice

from hexvoice_indextts.graphs.gpt_conditioning import EmotionVector
from hexvoice_indextts.model_dir.config import Conformer, Gpt
from hexvoice_indextts.tiny.model import EMO_NUM, GPT_WIDTH, STYLE_DIM, tiny_config
from hexvoice_indextts.voice.emotion import (
    merge,
    most_similar,
    scaled_weights,
    split,
    with_weights,
)

CFG = tiny_config()["gpt"]


@pytest.mark.parametrize("alpha", [1.0, 0.35, 1.7])
def test_merge_is_upstreams_merge_emovec(alpha: float) -> None:
    torch.manual_seed(0)
    gpt = UnifiedVoice(**CFG).eval()
    typed = Gpt(
        **{
            **CFG,
            **{
                k: Conformer(**CFG[k])
                for k in ("condition_module", "emo_condition_module")
            },
        }
    )
    port = EmotionVector(gpt.state_dict(), typed).eval()
    g = torch.Generator().manual_seed(1)
    spk, emo = (
        torch.randn(1, 23, 1024, generator=g),
        torch.randn(1, 30, 1024, generator=g),
    )
    width = torch.tensor([1024])
    with torch.no_grad():
        want = gpt.merge_emovec(spk, emo, width, width, alpha=alpha).numpy()
        base = port(spk, torch.ones(1, 23)).numpy()
        other = port(emo, torch.ones(1, 30)).numpy()
    assert np.abs(merge(base, other, alpha) - want).max() <= 1e-6 * np.abs(want).max()


def upstream_with_weights(merged, weights, style, spk_matrix, emo_matrix):  # type: ignore[no-untyped-def]
    """infer_v2.infer_generator's lines for an emo_vector (use_random False)."""
    weight_vector = torch.tensor(weights)
    spk_blocks, emo_blocks = (
        torch.split(spk_matrix, EMO_NUM),
        torch.split(emo_matrix, EMO_NUM),
    )
    index = [find_most_similar_cosine(style, tmp) for tmp in spk_blocks]
    rows = torch.cat(
        [tmp[i].unsqueeze(0) for i, tmp in zip(index, emo_blocks, strict=True)], 0
    )
    emovec_mat = torch.sum(weight_vector.unsqueeze(1) * rows, 0).unsqueeze(0)
    return (emovec_mat + (1 - torch.sum(weight_vector)) * merged).numpy()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_eight_weights_are_upstreams(seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    n = sum(EMO_NUM)
    spk_matrix, emo_matrix = (
        torch.randn(n, STYLE_DIM, generator=g),
        torch.randn(n, GPT_WIDTH, generator=g),
    )
    style, merged = (
        torch.randn(1, STYLE_DIM, generator=g),
        torch.randn(1, GPT_WIDTH, generator=g),
    )
    weights = scaled_weights(torch.rand(8, generator=g).tolist(), 0.6)
    want = upstream_with_weights(merged, weights, style, spk_matrix, emo_matrix)
    got = with_weights(
        merged.numpy(), weights, style.numpy(),
        split(spk_matrix.numpy(), EMO_NUM), split(emo_matrix.numpy(), EMO_NUM),
    )  # fmt: skip
    assert np.abs(got - want).max() <= 1e-6 * np.abs(want).max()
    for block in split(spk_matrix.numpy(), EMO_NUM):
        want_i = int(find_most_similar_cosine(style, torch.from_numpy(block)))
        assert most_similar(style.numpy(), block) == want_i


def test_weights_scale_and_truncate_as_upstream() -> None:
    assert scaled_weights([0.5, 0.33333], 1.0) == [0.5, 0.33333]
    assert scaled_weights([0.5, 0.33333], 2.5) == [0.5, 0.33333]  # clamped to 1
    assert scaled_weights([0.5, 0.33333, 0.9], 0.3) == [0.15, 0.0999, 0.27]
    assert scaled_weights([0.5], -1.0) == [0.0]
