"""The code predictor on the tiny bundles (CPU backend): 16 cp_step calls a
frame with upstream's table/head offsets, the talker's next input row, one feed
for free run and teacher forcing, cancel between graph calls."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from daemon.engines.qwen3.tts.frames.sampling import TalkerChooser
from daemon.sdk.cancel import Cancelled
from daemon.sdk.local import LocalEngine, open_engine
from daemon.sdk.tts import SynthesisOptions
from tests.cancel_after import CancelAfter

#: tiny.TEXTS["zh"]: greedy ends by EOS in chinese on both tiny bundles
TEXT = "今天天气很好，我们去公园散步吧。"
GROUPS = 16


@pytest.fixture(scope="module", params=["custom", "base"])
def loaded(
    request: pytest.FixtureRequest,
    tiny_tts_custom_bundle: Path,
    tiny_tts_base_bundle: Path,
) -> Iterator[LocalEngine]:
    """custom: predictor as wide as the talker; base: narrower (a real
    small_to_mtp_projection in the graph)."""
    bundle = (
        tiny_tts_custom_bundle if request.param == "custom" else tiny_tts_base_bundle
    )
    with open_engine(bundle, "cpu") as engine:
        yield engine


def test_offsets_heads_and_the_next_talker_row(loaded: LocalEngine) -> None:
    """Head k predicts code k+1; position s >= 2 embeds code s-1 with table s-2;
    the row is C(code0) + sum_i cp_table[i-1](code_i) of the chosen codes."""
    m = loaded.engine.model
    pred, cp_calls = m.predictor, loaded.graphs["cp_step"].stats
    h = np.random.default_rng(1).normal(0, 1, m.p.talker.hidden).astype(np.float32)
    chosen = [
        int(c) for c in np.random.default_rng(2).integers(0, m.p.predictor.vocab, 15)
    ]
    heads, inputs = [], []
    x = pred.graph.bind()["x"][0, 0]

    def choose(logits: np.ndarray, head: int) -> int:
        heads.append(head)
        inputs.append(x.copy())  # what the head's call was fed
        assert logits.shape == (m.p.predictor.vocab,)
        return chosen[head]

    before = cp_calls.calls
    codes, row = pred.frame(h, 7, choose)
    assert cp_calls.calls - before == GROUPS  # position 0 (h) + 15 heads
    assert codes == chosen and heads == list(range(15))
    codec, tables = m.predictor.codec_embedding, m.predictor.cp_embedding
    np.testing.assert_array_equal(inputs[0], codec[7].astype(np.float32))
    for k in range(1, 15):  # head k's call embedded code k with table k-1
        np.testing.assert_array_equal(
            inputs[k], tables[k - 1, chosen[k - 1]].astype(np.float32)
        )
    want = codec[7].astype(np.float32)
    for i, c in enumerate(chosen):
        want = want + tables[i, c].astype(np.float32)
    np.testing.assert_allclose(row, want, rtol=0, atol=1e-5)


def test_free_run_equals_teacher_forcing_its_own_frames(loaded: LocalEngine) -> None:
    """The greedy frames are the argmax of the logits teacher forcing gives for
    them: both go through the same feed (an offset slip would show here)."""
    m = loaded.engine.model
    limit = 40
    options = SynthesisOptions(language="chinese", extra={"max_new_tokens": limit})
    codes = m.greedy(TEXT, options)
    assert codes.shape[1] == GROUPS and 1 <= len(codes) < limit - 1  # EOS ended it
    request = m.request(SynthesisOptions(language="chinese", extra={"greedy": True}))
    talker, heads = m.generator.teacher_forced(m.prompt(TEXT, request), codes)
    np.testing.assert_array_equal(heads.argmax(-1), codes[:, 1:])
    # code0s: the talker's rows through the greedy chooser (penalty, EOS mask,
    # suppression), then EOS after the last frame (the run ended early)
    choose = TalkerChooser(
        request.sampling, m.p.talker.vocab, m.p.tokens.codec_eos, None
    )
    replay = [choose(row.copy()) for row in talker]
    assert [t for t, _ in replay[:-1]] == list(codes[:, 0])
    assert replay[-1] == (m.p.tokens.codec_eos, True)


def test_cancel_lands_between_two_graph_calls(loaded: LocalEngine) -> None:
    """Checks: one before the prefill, then one before each of the 16 cp_step
    calls and the talker step of every frame; firing on check n lets n - 1
    graph calls run."""
    m = loaded.engine.model
    request = m.request(SynthesisOptions(extra={"greedy": True, "max_new_tokens": 20}))
    prompt = m.prompt(TEXT, request)
    runners = loaded.graphs
    keys = ["cp_step", *(k for k in runners if k.startswith("talker_"))]
    before = sum(runners[k].stats.calls for k in keys)
    n = 1 + 17 + 5  # prefill, one whole frame, 4 cp_step calls of the next
    cancel = CancelAfter(n)
    with pytest.raises(Cancelled):
        list(m.generator.frames(prompt, request, cancel))
    assert sum(runners[k].stats.calls for k in keys) - before == n - 1
