"""w2v-BERT's input as upstream's SeamlessM4TFeatureExtractor (with the real
preprocessor_config.json) makes it: features, the masked last row of an odd
frame count, and the padding into a bucket."""

from __future__ import annotations

import numpy as np
import pytest
from transformers import SeamlessM4TFeatureExtractor

from hexvoice_indextts.tiny.hub import W2V_PREPROCESSOR
from hexvoice_indextts.voice.semantic import bucket_inputs, w2v_features

#: the extractor's own float32 arithmetic: measured 2e-6 of the features'
#: range (|x| up to ~5) against this float64 path
TOLERANCE = 1e-5


def extractor() -> SeamlessM4TFeatureExtractor:
    skip = ("feature_extractor_type", "processor_class")
    return SeamlessM4TFeatureExtractor(
        **{k: v for k, v in W2V_PREPROCESSOR.items() if k not in skip}
    )


@pytest.mark.parametrize("samples", [1601, 16000 * 2 + 37, 16480])
def test_features_and_mask_are_the_extractors(samples: int) -> None:
    audio = (0.3 * np.random.default_rng(samples).standard_normal(samples)).clip(-1, 1)
    audio = audio.astype(np.float32)
    theirs = extractor()(audio, sampling_rate=16000, return_tensors="np")
    f, m = w2v_features(audio)
    assert f.shape == theirs["input_features"][0].shape
    assert m.tolist() == theirs["attention_mask"][0].tolist()
    err = np.abs(f - theirs["input_features"][0]).max() / np.abs(f).max()
    assert err < TOLERANCE


def test_an_odd_frame_count_masks_its_last_row() -> None:
    f, m = w2v_features(np.random.default_rng(0).standard_normal(16480) * 0.1)
    assert len(f) == 51 and m[-1] == 0 and m[:-1].all()
    assert (f[-1, 80:] == 1.0).all()  # the padding frame is padding_value


def test_bucket_inputs_pad_with_masked_zeros() -> None:
    f, m = np.ones((3, 160), np.float32), np.array([1, 1, 0], np.float32)
    inputs = bucket_inputs(f, m, 5)
    assert (
        inputs["features"].shape == (1, 5, 160) and not inputs["features"][0, 3:].any()
    )
    assert inputs["mask"].tolist() == [[1, 1, 0, 0, 0]]
