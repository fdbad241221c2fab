"""The T2S gate relative to the modules' own float32 floor: the tiny test
voice's T2S (the port of upstream's Text2SemanticDecoder) given a near tie on
top of every row, one float32 cannot resolve (float64 can), passes: a fixed
bar of 100 % top-1 agreement would hold a port to what upstream's own float32
cannot do.  The same graphs from weights with one tensor 1 % off are refused."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from scripts.gptsovits.export import graphs as export
from scripts.gptsovits.models.t2s import T2SModel
from scripts.gptsovits.shapes import TINY
from scripts.gptsovits.verify import cpu as verify

#: dims of the last block's output held constant (LayerNorm weight 0, bias
#: ONE_BIAS / 1): ONE lifts LM-head row TOP by TOP_LIFT so it wins every row
#: (logits ~38, float32 spacing ~4e-6); TWO gives row TIE, otherwise a copy of
#: TOP, one float32 ulp more at TIE_WEIGHT (~6e-8): float64 puts TIE on top by
#: that much, float32 cannot tell the two rows apart
ONE, TWO, TOP, TIE = 17, 18, 7, 8
ONE_BIAS, TOP_LIFT, TIE_WEIGHT = 1.3, 30.0, 0.5


def near_tie(model: T2SModel) -> T2SModel:
    ill = T2SModel(model.dims).eval()
    ill.load_state_dict(model.state_dict())
    with torch.no_grad():
        norm = ill.h.layers[-1].norm2
        norm.weight[[ONE, TWO]] = 0.0
        norm.bias[ONE], norm.bias[TWO] = ONE_BIAS, 1.0
        head = ill.ar_predict_layer.weight
        head[TOP, ONE] += TOP_LIFT
        head[TOP, TWO] = TIE_WEIGHT
        head[TIE] = head[TOP]
        head[TIE, TWO] = float(np.nextafter(np.float32(TIE_WEIGHT), np.float32(1)))
    return ill


def _graphs(model: T2SModel, out: Any) -> tuple[Any, dict[int, Any]]:
    paths = {s.name: s.path for s in export.export_t2s(model, TINY, out)}
    return paths["t2s_prefill"], {n: paths[f"t2s_decode_L{n}"] for n in TINY.kv_buckets}


@pytest.fixture(scope="module")
def tie(t2s_model: T2SModel, tmp_path_factory: pytest.TempPathFactory) -> Any:
    model = near_tie(t2s_model)
    return model, *_graphs(model, tmp_path_factory.mktemp("t2s_tie"))


def _float64_gaps(model: T2SModel) -> tuple[np.ndarray, np.ndarray]:
    """float64's lead of TIE over TOP on the gate's rows (its own inputs, seed
    0), and float32's spacing at those logits."""
    d, p = model.dims, TINY.prefill_len
    n_x, n_y = max(2, p * 60 // 512), max(2, p * 100 // 512)
    g = torch.Generator().manual_seed(0)
    phones = torch.randint(0, d.phone_vocab, (n_x,), generator=g)
    bert = torch.randn(d.bert_dim, n_x, generator=g)
    prompt = torch.randint(0, d.eos, (n_y,), generator=g)
    tokens = torch.randint(0, d.eos, (verify.T2S_STEPS,), generator=g)
    with verify.in_float64(model):
        exact = model.reference_logits(phones, bert.double(), prompt, tokens).numpy()
    spacing = np.spacing(np.abs(exact[:, TOP]).astype(np.float32))
    return exact[:, TIE] - exact[:, TOP], spacing


def test_a_t2s_with_a_near_tie_passes_relative_to_its_float32_floor(tie) -> None:  # type: ignore[no-untyped-def]
    model, prefill, decode = tie
    # the case is real: float64 ranks TIE first on every row, by less than half
    # of float32's spacing there, so no float32 computation can rank it
    gap, spacing = _float64_gaps(model)
    assert np.all(gap > 0) and np.all(gap < spacing / 2), (gap, spacing)
    result = verify.gate_t2s(model, prefill, decode, TINY)  # raises on a refusal
    assert all(result[f"t2s_L{n}_rel_err"] < 1e-5 for n in TINY.kv_buckets), result
    assert all(result[f"t2s_L{n}_top1"] == 1.0 for n in TINY.kv_buckets), result


def test_the_near_tie_t2s_with_one_weight_off_is_refused(tie, tmp_path) -> None:  # type: ignore[no-untyped-def]
    model, prefill, _ = tie
    other = near_tie(model)
    with torch.no_grad():  # a uniform bias shift would vanish in the LayerNorm
        other.h.layers[1].linear2.weight.mul_(1.01)
    _, wrong = _graphs(other, tmp_path)
    with pytest.raises(verify.GateError, match=r"t2s_decode_L192: logits rel error"):
        verify.gate_t2s(model, prefill, {192: wrong[192]}, TINY)
