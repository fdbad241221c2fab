"""scripts/qwen3/tts/oracle.py and oracle_audio.py: upstream's runs, as read by
hooks, are self-consistent and say what the engine must reproduce."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.qwen3_fixtures import require_qwen_tts

require_qwen_tts()

TEXT = "Hello, how are you today?"  # tiny.TEXTS["en"]
MIXED = "我喜欢听音乐, and I like to read books."  # tiny.TEXTS["mixed"]: 8 frames


@pytest.fixture(scope="module")
def custom(tiny_tts_custom: Path) -> Any:
    from scripts.qwen3.tts.oracle import load

    return load(tiny_tts_custom)


@pytest.fixture(scope="module")
def base(tiny_tts_base: Path) -> Any:
    from scripts.qwen3.tts.oracle import load

    return load(tiny_tts_base)


@pytest.fixture(scope="module")
def run(custom: Any) -> Any:
    from scripts.qwen3.tts import oracle

    return oracle.greedy(custom, TEXT, "english", speaker="serena")


@pytest.fixture(scope="module")
def clip() -> np.ndarray:
    """1.5 s at 24 kHz: a tone plus noise."""
    t = np.arange(36000) / 24000
    noise = np.random.default_rng(0).standard_normal(t.size)
    return (0.2 * np.sin(2 * np.pi * 180 * t) + 0.02 * noise).astype(np.float32)


def test_load_is_cached_and_fp32(custom: Any, tiny_tts_custom: Path) -> None:
    import torch

    from scripts.qwen3.tts.oracle import load

    assert load(tiny_tts_custom) is custom
    assert {p.dtype for p in custom.model.parameters()} == {torch.float32}


def test_greedy_frames_are_one_step_late_and_in_range(custom: Any, run: Any) -> None:
    cfg = custom.model.config.talker_config
    n = len(run.codes)
    assert run.codes.shape == (n, 16) and run.codes.dtype == np.int64
    assert run.code0.shape == (n + 1,)
    assert run.talker_logits.shape == (n + 1, cfg.vocab_size)
    vc = cfg.code_predictor_config.vocab_size
    assert run.predictor_logits.shape == (n, 15, vc)
    assert run.eos == cfg.codec_eos_token_id and run.stopped
    assert ((run.codes >= 0) & (run.codes < vc)).all()
    # code0 of frame g is talker step g's pick; the last pick (EOS) has no frame
    np.testing.assert_array_equal(run.code0[:n], run.codes[:, 0])
    # greedy predictor: its picks are the raw argmax (no processors there)
    np.testing.assert_array_equal(run.predictor_logits.argmax(-1), run.codes[:, 1:])


def test_greedy_is_deterministic(custom: Any, run: Any) -> None:
    from scripts.qwen3.tts import oracle

    again = oracle.greedy(custom, TEXT, "english", speaker="serena")
    np.testing.assert_array_equal(again.codes, run.codes)
    np.testing.assert_array_equal(again.talker_logits, run.talker_logits)


def test_teacher_forcing_replays_greedy_exactly_and_follows_other_codes(
    custom: Any, run: Any
) -> None:
    from scripts.qwen3.tts import oracle

    tf = oracle.teacher_forced(custom, TEXT, run.codes, "english", speaker="serena")
    np.testing.assert_array_equal(tf.talker_logits, run.talker_logits)
    np.testing.assert_array_equal(tf.predictor_logits, run.predictor_logits)

    other = (run.codes[:4] + 1) % 128
    tf2 = oracle.teacher_forced(custom, TEXT, other, "english", speaker="serena")
    np.testing.assert_array_equal(tf2.codes, other)
    assert tf2.talker_logits.shape[0] == 5 and tf2.stopped
    # the prefill row does not depend on the codes; the later rows do
    np.testing.assert_array_equal(tf2.talker_logits[0], run.talker_logits[0])
    assert not np.allclose(tf2.talker_logits[1], run.talker_logits[1])
    with pytest.raises(ValueError, match="n >= 2"):
        oracle.teacher_forced(custom, TEXT, run.codes[:1], "english", speaker="serena")


def _project(tts: Any, token_ids: list[int]) -> np.ndarray:
    import torch

    talker = tts.model.talker
    with torch.no_grad():
        ids = torch.tensor([token_ids])
        return talker.text_projection(talker.get_text_embeddings()(ids))[0].numpy()


def _codec_rows(tts: Any, ids: list[int]) -> np.ndarray:
    return tts.model.talker.get_input_embeddings().weight.detach().numpy()[ids]


def test_the_prompt_rows_are_upstreams_both_text_modes(custom: Any) -> None:
    from scripts.qwen3.tts import oracle

    cfg = custom.model.config
    tc = cfg.talker_config
    ids = custom._tokenize_texts([custom._build_assistant_text(TEXT)])[0][0].tolist()
    n_text = len(ids) - 8
    pad_bos_eos = _project(custom, [cfg.tts_pad_token_id, cfg.tts_bos_token_id])
    lang = tc.codec_language_id["english"]
    codec = [tc.codec_think_id, tc.codec_think_bos_id, lang, tc.codec_think_eos_id]
    codec += [tc.spk_id["serena"], tc.codec_pad_id, tc.codec_bos_id]

    p = oracle.prompt(custom, TEXT, "english", speaker="serena")  # non-streaming
    assert p.embeds.shape == (3 + 6 + n_text + 1 + 1, tc.hidden_size)
    np.testing.assert_allclose(p.embeds[:3], _project(custom, ids[:3]), atol=1e-6)
    pad = pad_bos_eos[0]
    want = np.vstack(
        [
            pad + _codec_rows(custom, codec[:5]),
            pad_bos_eos[1] + _codec_rows(custom, codec[5:6]),
        ]
    )
    np.testing.assert_allclose(p.embeds[3:9], want, atol=1e-5)
    np.testing.assert_allclose(p.trailing, pad[None], atol=1e-6)
    np.testing.assert_allclose(p.tts_pad, pad, atol=1e-6)

    s = oracle.prompt(
        custom, TEXT, "english", speaker="serena", non_streaming_mode=False
    )
    assert s.embeds.shape == (3 + 6 + 1, tc.hidden_size)
    assert s.trailing.shape == (n_text, tc.hidden_size)  # text[1:] + tts_eos
    text_rows = _project(custom, ids[3:-5])
    np.testing.assert_allclose(
        s.embeds[-1],
        text_rows[0] + _codec_rows(custom, [tc.codec_bos_id])[0],
        atol=1e-5,
    )
    np.testing.assert_allclose(s.trailing[:-1], text_rows[1:], atol=1e-6)


def test_a_dialect_speaker_swaps_chinese_and_auto_to_its_dialect(custom: Any) -> None:
    from scripts.qwen3.tts import oracle

    tc = custom.model.config.talker_config
    dialect = tc.spk_is_dialect["eric"]
    pad = _project(custom, [custom.model.config.tts_pad_token_id])[0]
    want = pad + _codec_rows(custom, [tc.codec_language_id[dialect]])[0]
    for language in ("chinese", "auto"):
        p = oracle.prompt(custom, "你好", language, speaker="eric")
        np.testing.assert_allclose(p.embeds[3 + 2], want, atol=1e-5)  # the language row
    english = oracle.prompt(custom, "你好", "english", speaker="eric")
    assert not np.allclose(english.embeds[3 + 2], want)
    # auto without a dialect speaker: nothink prefix, no language row
    auto = oracle.prompt(custom, "你好", "auto", speaker="serena")
    assert (
        auto.embeds.shape[0]
        == oracle.prompt(custom, "你好", "english", speaker="serena").embeds.shape[0]
        - 1
    )


def test_the_x_vector_is_the_speaker_row_of_a_base_prompt(
    base: Any, clip: np.ndarray
) -> None:
    from scripts.qwen3.tts import oracle
    from scripts.qwen3.tts.oracle_audio import speaker_embedding

    xv = speaker_embedding(base, clip)
    assert xv.shape == (base.model.config.talker_config.hidden_size,)
    pad = _project(base, [base.model.config.tts_pad_token_id])[0]
    p = oracle.prompt(base, TEXT, "english", xvector=xv)
    np.testing.assert_allclose(p.embeds[3 + 4], pad + xv, atol=1e-5)
    none = oracle.prompt(base, TEXT, "english")  # upstream's speaker-less prompt
    assert none.embeds.shape[0] == p.embeds.shape[0] - 1
    assert not oracle.default_non_streaming(base) and p.trailing.shape[0] > 1


def test_sampling_repeats_with_its_seed(custom: Any) -> None:
    from scripts.qwen3.tts import oracle

    a = oracle.sample(custom, TEXT, 5, "english", speaker="serena", max_new_tokens=6)
    b = oracle.sample(custom, TEXT, 5, "english", speaker="serena", max_new_tokens=6)
    np.testing.assert_array_equal(a.codes, b.codes)
    assert len(a.codes) <= 5


def test_codec_decodes_1920_samples_per_frame_chunked_as_upstream(
    custom: Any, run: Any
) -> None:
    from scripts.qwen3.tts.oracle_audio import decode, decode_chunked, decode_plain

    codec = custom.model.speech_tokenizer
    n = len(run.codes)
    wav = decode(codec, run.codes)
    assert wav.shape == (1920 * n,) and wav.dtype == np.float32
    # n <= 300: one chunk, so upstream's decode is one plain forward
    np.testing.assert_array_equal(wav, decode_plain(codec, run.codes))
    np.testing.assert_array_equal(wav, decode_chunked(codec, run.codes, 300, 25))
    small = decode_chunked(codec, run.codes, 3, 2)
    assert small.shape == wav.shape
    # the first chunk has no context: causal, so it is the prefix of the full forward
    np.testing.assert_allclose(small[: 3 * 1920], wav[: 3 * 1920], atol=1e-5)
    assert not np.allclose(small, wav)  # later chunks restart positions
    with pytest.raises(ValueError, match=r"\[n, 16\]"):
        decode_plain(codec, run.codes[:, :8])


def test_speaker_embedding_is_the_encoder_on_upstreams_mel(
    base: Any, clip: np.ndarray
) -> None:
    from scripts.qwen3.tts.oracle_audio import (
        clone_xvector,
        mel,
        speaker_embedding,
        speaker_from_mel,
    )

    m = mel(clip)
    assert m.shape == (len(clip) // 256, 128) and m.dtype == np.float32
    assert float(m.min()) >= np.log(1e-5) - 1e-6
    xv = speaker_embedding(base, clip)
    np.testing.assert_array_equal(xv, speaker_from_mel(base, m))
    np.testing.assert_allclose(clone_xvector(base, clip, 24000), xv, atol=1e-6)
    resampled = clone_xvector(base, clip[::3], 8000)  # librosa to 24 kHz first
    assert resampled.shape == xv.shape and not np.allclose(resampled, xv)


def test_upstreams_public_api_speaks_what_the_oracle_says(
    custom: Any, base: Any, run: Any, clip: np.ndarray
) -> None:
    """generate_custom_voice / generate_voice_clone(x_vector_only_mode=True), as
    users call them, give the audio of the oracle's greedy codes."""
    from scripts.qwen3.tts import oracle
    from scripts.qwen3.tts.oracle_audio import decode, speaker_embedding
    from scripts.qwen3.tts.upstream import torch_threads

    greedy = {"do_sample": False, "subtalker_dosample": False}
    cap = oracle.MAX_NEW_TOKENS
    with torch_threads(1):
        wavs, sr = custom.generate_custom_voice(
            TEXT, speaker="serena", language="english", max_new_tokens=cap, **greedy
        )
    assert sr == 24000
    np.testing.assert_array_equal(
        wavs[0], decode(custom.model.speech_tokenizer, run.codes)
    )

    with torch_threads(1):
        wavs, _ = base.generate_voice_clone(
            MIXED, language="auto", ref_audio=(clip, 24000), x_vector_only_mode=True,
            max_new_tokens=cap, **greedy,
        )  # fmt: skip
    want = oracle.greedy(base, MIXED, "auto", xvector=speaker_embedding(base, clip))
    assert len(want.codes) >= 2 and wavs[0].shape == (1920 * len(want.codes),)
    np.testing.assert_array_equal(
        wavs[0], decode(base.model.speech_tokenizer, want.codes)
    )
