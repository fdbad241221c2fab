"""The masked fixed-window HuBERT equals transformers' HubertModel unpadded."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from scripts.gptsovits.models.hubert import BlockConv, MaskedHubert, conv_lengths
from scripts.gptsovits.synthetic.hubert import tiny_hubert_config, write_tiny_hubert

WINDOW = 64000  # 4 s: room for a 2.5 s and a 3.4 s clip, plus padding


@pytest.fixture(scope="module")
def hubert(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from transformers import HubertModel

    path = write_tiny_hubert(tmp_path_factory.mktemp("hubert"))
    return HubertModel.from_pretrained(str(path)).eval()


def _window(hubert, clip: torch.Tensor) -> tuple[torch.Tensor, ...]:  # type: ignore[no-untyped-def]
    n = len(clip)
    full, valid = conv_lengths(hubert.config, WINDOW), conv_lengths(hubert.config, n)
    audio = torch.zeros(1, WINDOW)
    audio[0, :n] = clip
    cm, fm = torch.zeros(1, 1, full[0]), torch.zeros(1, 1, full[-1])
    cm[..., : valid[0]] = 1
    fm[..., : valid[-1]] = 1
    return audio, cm, fm


@pytest.mark.parametrize("samples", [40000, 54321])
def test_valid_frames_equal_unpadded_model(hubert, samples: int) -> None:  # type: ignore[no-untyped-def]
    clip = 0.3 * torch.randn(samples, generator=torch.Generator().manual_seed(samples))
    with torch.no_grad():
        want = hubert(clip[None])["last_hidden_state"].transpose(1, 2)
        got = MaskedHubert(hubert).eval()(*_window(hubert, clip))
    got = got[..., : want.shape[-1]]
    assert ((got - want).norm() / want.norm()).item() < 1e-5


def test_unmasked_group_norm_would_differ(hubert) -> None:  # type: ignore[no-untyped-def]
    """The masks matter: normalising over the whole padded window is wrong."""
    clip = 0.3 * torch.randn(40000, generator=torch.Generator().manual_seed(1))
    audio, cm, fm = _window(hubert, clip)
    with torch.no_grad():
        want = hubert(clip[None])["last_hidden_state"].transpose(1, 2)
        got = MaskedHubert(hubert).eval()(audio, torch.ones_like(cm), fm)
    got = got[..., : want.shape[-1]]
    assert ((got - want).norm() / want.norm()).item() > 1e-3


@pytest.mark.parametrize(
    ("k", "s", "t"), [(10, 5, 1003), (3, 2, 101), (3, 2, 100), (2, 2, 51)]
)
def test_block_conv_equals_conv1d(k: int, s: int, t: int) -> None:
    torch.manual_seed(k * t)
    conv = nn.Conv1d(4, 6, k, stride=s, bias=False)
    x = torch.randn(1, 4, t)
    with torch.no_grad():
        want = conv(x).transpose(1, 2)
        got = BlockConv(conv)(x.transpose(1, 2))
    assert got.shape == want.shape
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_other_layouts_are_refused() -> None:
    from transformers import HubertModel

    cfg = tiny_hubert_config()
    cfg.do_stable_layer_norm = True
    cfg.feat_extract_norm = "layer"
    with pytest.raises(ValueError, match="not chinese-hubert-base's layout"):
        MaskedHubert(HubertModel(cfg))
