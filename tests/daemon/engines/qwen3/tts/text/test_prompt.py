"""The prompt rows equal upstream ``generate``'s talker_input_embeds and
trailing_text_hidden (captured where it hands them to the talker), on the tiny
checkpoints, with the tables and text projection taken from upstream's model:
every speaker kind (plain, both dialects), language (auto, named, the dialect
swap), text mode and the Base x-vector row."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from daemon.engines.qwen3.tts.params import TtsParams
from daemon.engines.qwen3.tts.text.prompt import PromptBuilder

torch = pytest.importorskip("torch")
try:  # first: the tiny fixtures' importorskip("qwen_tts") needs the torchaudio stub
    from scripts.qwen3.tts.upstream import import_qwen_tts, torch_threads

    import_qwen_tts()
except ImportError as exc:
    pytest.skip(f"qwen-tts: {exc}", allow_module_level=True)


class _Stop(Exception):
    pass


def params_of(model_dir: Path) -> TtsParams:
    """The config.json parts of a bundle's params (buckets/codec: placeholders)."""
    c = json.loads((model_dir / "config.json").read_text())
    t, cp = c["talker_config"], c["talker_config"]["code_predictor_config"]
    v = t["vocab_size"]

    def shape(d: dict[str, Any]) -> dict[str, Any]:
        return {"hidden": d["hidden_size"], "head_dim": d["head_dim"],
                "layers": d["num_hidden_layers"], "kv_heads": d["num_key_value_heads"],
                "vocab": d["vocab_size"], "rope_theta": d["rope_theta"],
                "attention_scaling": 1.0}  # fmt: skip

    base = c["tts_model_type"] == "base"
    xvector = {"sample_rate": 24000, "n_fft": 1024, "hop": 256, "win": 1024,
               "pad": 384, "n_mels": 128, "fmin": 0, "fmax": 12000,
               "frame_buckets": [100], "dim": t["hidden_size"],
               "reflect_pad": 4}  # fmt: skip
    return TtsParams.from_mapping({
        "kind": c["tts_model_type"],
        "talker": shape(t),
        "text": {"hidden": t["text_hidden_size"], "rows": 32,
                 "vocab": t["text_vocab_size"]},
        "predictor": {**shape(cp), "groups": cp["num_code_groups"]},
        "prefill_buckets": [64], "kv_buckets": [192],
        "tokens": {
            "tts_pad": c["tts_pad_token_id"], "tts_bos": c["tts_bos_token_id"],
            "tts_eos": c["tts_eos_token_id"], "im_start": c["im_start_token_id"],
            "codec_pad": t["codec_pad_id"], "codec_bos": t["codec_bos_id"],
            "codec_eos": t["codec_eos_token_id"], "codec_think": t["codec_think_id"],
            "codec_nothink": t["codec_nothink_id"],
            "codec_think_bos": t["codec_think_bos_id"],
            "codec_think_eos": t["codec_think_eos_id"],
        },
        "languages": t["codec_language_id"],
        "speakers": {n: {"id": i, "dialect": t["spk_is_dialect"][n] or None}
                     for n, i in t["spk_id"].items()},
        "sampling": {"suppress": [v - 1024, v]},
        "codec": {"sample_rate": 24000, "samples_per_frame": 1920, "chunk_frames": 300,
                  "left_context": 25, "windows": [{"frames": 8, "context": 0}],
                  "first_frames": 4},
        "xvector": xvector if base else None,
    })  # fmt: skip


class Upstream:
    """A tiny checkpoint in upstream's classes and our builder over its tables."""

    def __init__(self, model_dir: Path) -> None:
        from tokenizers import Tokenizer

        qt = import_qwen_tts()
        self.tts = qt.Qwen3TTSModel.from_pretrained(
            str(model_dir), device_map="cpu", dtype=torch.float32
        )
        talker = self.tts.model.talker
        self.p = params_of(model_dir)
        proj = talker.text_projection

        def project(x: np.ndarray) -> np.ndarray:
            with torch.no_grad():
                return proj(torch.from_numpy(x)).numpy()

        self.builder = PromptBuilder(
            self.p,
            Tokenizer.from_file(str(model_dir / "tokenizer.json")),
            talker.get_text_embeddings().weight.detach().numpy(),
            talker.get_input_embeddings().weight.detach().numpy(),
            project,
        )

    def prompt(self, text: str, language: str, non_streaming: bool, speaker=None,
               xvector=None) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        """upstream's (talker_input_embeds [S, H], trailing_text_hidden [N, H])."""
        model, got = self.tts.model, {}

        def grab(**kwargs: Any) -> None:
            got.update(kwargs)
            raise _Stop

        clone = None
        if xvector is not None:
            clone = {"ref_spk_embedding": [torch.from_numpy(xvector)],
                     "x_vector_only_mode": [True], "icl_mode": [False],
                     "ref_code": None}  # fmt: skip
        ids = self.tts._tokenize_texts([self.tts._build_assistant_text(text)])
        model.talker.generate = grab  # the hand-over point; removed below
        try:
            with torch_threads(1), pytest.raises(_Stop):
                model.generate(
                    input_ids=ids, languages=[language],
                    speakers=None if speaker is None else [speaker],
                    voice_clone_prompt=clone, non_streaming_mode=non_streaming,
                )  # fmt: skip
        finally:
            del model.talker.generate
        return (got["inputs_embeds"][0].numpy(), got["trailing_text_hidden"][0].numpy())


@pytest.fixture(scope="module")
def custom(tiny_tts_custom: Path) -> Upstream:
    return Upstream(tiny_tts_custom)


@pytest.fixture(scope="module")
def base(tiny_tts_base: Path) -> Upstream:
    return Upstream(tiny_tts_base)


TEXTS = ("Hello world, this is a test.", "你好，今天天气很好。", "Hello 世界, ok.")
ATOL = 1e-6  # float32 sums in a different order


@pytest.mark.parametrize("non_streaming", [True, False])
@pytest.mark.parametrize(
    ("speaker", "language"),
    [("aiden", "auto"), ("ryan", "english"), ("serena", "chinese"),
     ("dylan", "auto"), ("eric", "chinese"), ("eric", "english")],
)  # fmt: skip
def test_custom_voice_prompt_is_upstreams(
    custom: Upstream, speaker: str, language: str, non_streaming: bool
) -> None:
    mode = "non_streaming" if non_streaming else "streaming"
    for text in TEXTS:
        ref, trailing = custom.prompt(text, language, non_streaming, speaker=speaker)
        ours = custom.builder.build(text, language, speaker, None, mode)
        assert ours.embeds.shape == ref.shape
        np.testing.assert_allclose(ours.embeds, ref, rtol=0, atol=ATOL)
        np.testing.assert_allclose(ours.trailing, trailing, rtol=0, atol=ATOL)
        np.testing.assert_array_equal(
            ours.pad, ours.trailing[-1] if non_streaming else ours.pad
        )
        n = custom.builder.text_tokens(text)
        assert ours.length == custom.builder.length(n, mode, language, speaker)


def test_dialect_speakers_swap_the_language_row(custom: Upstream) -> None:
    """chinese/auto with eric (sichuan) gives sichuan's row; english keeps its own."""
    b, p = custom.builder, custom.p
    assert b.language_id("auto", "eric") == p.languages["sichuan_dialect"]
    assert b.language_id("Chinese", "dylan") == p.languages["beijing_dialect"]
    assert b.language_id("english", "eric") == p.languages["english"]
    assert b.language_id("auto", "aiden") is None


@pytest.mark.parametrize("non_streaming", [True, False])
@pytest.mark.parametrize("language", ["auto", "chinese", "english"])
def test_base_xvector_prompt_is_upstreams(
    base: Upstream, language: str, non_streaming: bool
) -> None:
    x = np.random.default_rng(3).normal(0, 1, base.p.talker.hidden).astype(np.float32)
    mode = "non_streaming" if non_streaming else "streaming"
    for text in TEXTS:
        ref, trailing = base.prompt(text, language, non_streaming, xvector=x)
        ours = base.builder.build(text, language, None, x, mode)
        np.testing.assert_allclose(ours.embeds, ref, rtol=0, atol=ATOL)
        np.testing.assert_allclose(ours.trailing, trailing, rtol=0, atol=ATOL)
        n = base.builder.text_tokens(text)
        assert ours.length == base.builder.length(n, mode, language, xvector=True)
    # upstream's speaker=None path: no speaker row at all
    ref, _ = base.prompt(TEXTS[0], "auto", True)
    np.testing.assert_allclose(base.builder.build(TEXTS[0]).embeds, ref, atol=ATOL)


def test_text_rows_after_the_trailing_ones_are_tts_pad(custom: Upstream) -> None:
    prompt = custom.builder.build(TEXTS[0], "auto", "aiden", None, "streaming")
    n = len(prompt.trailing)
    np.testing.assert_array_equal(prompt.text_row(n - 1), prompt.trailing[-1])
    np.testing.assert_array_equal(prompt.text_row(n), custom.builder.tts_pad)
    np.testing.assert_array_equal(prompt.text_row(n + 50), custom.builder.tts_pad)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"language": "klingon"}, "unknown language 'klingon'; known: auto, "),
        ({"speaker": "nobody"}, "unknown speaker 'nobody'; known: "),
        ({"speaker": "aiden", "xvector": np.zeros(64, np.float32)},
         "a speaker or an x-vector, not both"),
        ({"xvector": np.zeros(63, np.float32)}, "an x-vector must be 64 finite floats"),
        ({"xvector": np.full(64, np.nan, np.float32)}, "must be 64 finite floats"),
        ({"mode": "sometimes"}, "unknown text mode 'sometimes'"),
    ],
)  # fmt: skip
def test_bad_prompts_are_refused_clearly(
    custom: Upstream, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match="^qwen3-tts: ") as err:
        custom.builder.build(TEXTS[0], **kwargs)
    assert message in str(err.value)


def test_empty_text_is_refused(custom: Upstream) -> None:
    with pytest.raises(ValueError, match="no text tokens in ''"):
        custom.builder.build("")
