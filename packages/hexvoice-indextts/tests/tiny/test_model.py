"""The tiny config against what upstream reads of it, and the widths upstream
hard-codes."""

from __future__ import annotations

from typing import Any

from hexvoice_indextts.tiny import hub as tiny_hub
from hexvoice_indextts.tiny import model as tiny

#: Keys of the real config.yaml that upstream's inference never reads (training
#: settings, and the vocoder's type: only its name is read). The tiny config
#: keeps them so that it has the real file's shape.
UNREAD: frozenset[str] = frozenset(
    {
        "dataset.sample_rate",
        "dataset.squeeze",
        "dataset.mel.sample_rate",
        "dataset.mel.n_fft",
        "dataset.mel.hop_length",
        "dataset.mel.win_length",
        "dataset.mel.n_mels",
        "dataset.mel.mel_fmin",
        "dataset.mel.normalize",
        "s2mel.DiT.block_size",
        "s2mel.DiT.target",
        "s2mel.DiT.f0_condition",
        "s2mel.DiT.n_f0_bins",
        "s2mel.DiT.content_codebooks",
        "s2mel.DiT.add_resblock_in_transformer",
        "vocoder.type",
    }
)


def leaves(cfg: dict[str, Any], prefix: str = "") -> set[str]:
    out: set[str] = set()
    for key, value in cfg.items():
        if isinstance(value, dict):
            out |= leaves(value, f"{prefix}{key}.")
        else:
            out.add(f"{prefix}{key}")
    return out


def test_upstream_reads_every_tiny_key_but_the_unread_ones(runs):
    # upstream loaded the config in struct mode, so a key it reads that the
    # tiny config lacks has already failed the load
    ours = leaves(tiny.tiny_config())
    read = {k for k in runs.config_reads if k in ours}
    assert ours - read == UNREAD
    assert UNREAD <= ours


def test_hard_coded_widths():
    cfg = tiny.tiny_config()
    assert cfg["gpt"]["model_dim"] == tiny.GPT_WIDTH == 1280
    assert cfg["semantic_codec"]["hidden_size"] == tiny.W2V_WIDTH == 1024
    assert cfg["s2mel"]["length_regulator"]["in_channels"] == tiny.W2V_WIDTH
    assert cfg["s2mel"]["style_encoder"]["dim"] == tiny.STYLE_DIM == 192
    assert cfg["s2mel"]["DiT"]["in_channels"] == tiny.MEL_BINS == 80
    spect = cfg["s2mel"]["preprocess_params"]["spect_params"]
    assert spect["n_mels"] == tiny.MEL_BINS
    assert cfg["s2mel"]["wavenet"]["hidden_dim"] == cfg["s2mel"]["DiT"]["hidden_dim"]
    assert (
        cfg["s2mel"]["DiT"]["content_dim"]
        == cfg["s2mel"]["length_regulator"]["channels"]
    )
    assert tiny_hub.W2V_LAYERS >= 17  # get_emb reads hidden_states[17]


def test_config_copies_are_independent():
    a = tiny.tiny_config()
    a["gpt"]["layers"] = 99
    assert tiny.tiny_config()["gpt"]["layers"] == tiny.CONFIG["gpt"]["layers"]


def test_emotion_rows_and_mel_tokens():
    cfg = tiny.tiny_config()
    assert len(cfg["emo_num"]) == 8  # upstream's eight emotions (emo_bias)
    gpt = cfg["gpt"]
    assert gpt["start_mel_token"] == tiny.CODEBOOK
    assert gpt["stop_mel_token"] == tiny.CODEBOOK + 1
    assert gpt["number_mel_codes"] == tiny.CODEBOOK + 2
    assert cfg["semantic_codec"]["codebook_size"] == tiny.CODEBOOK
