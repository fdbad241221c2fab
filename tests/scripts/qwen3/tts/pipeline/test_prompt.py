"""The prompt, sampling and text mode as upstream has them
(scripts/qwen3/tts/pipeline/prompt.py): sampling is generation_config.json
over upstream's hard defaults; the prompt's position slices are checked."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from scripts.qwen3.tts.pipeline import prompt
from scripts.qwen3.tts.pipeline.source import read_model_dir
from tests.qwen3_fixtures import require_qwen_tts

require_qwen_tts()


def _model_cls() -> Any:
    from scripts.qwen3.tts.upstream import import_qwen_tts

    return import_qwen_tts().Qwen3TTSModel


def test_sampling_is_the_file_over_upstreams_hard_defaults(
    tiny_tts_custom: Path, tmp_path: Path
):
    model = Path(shutil.copytree(tiny_tts_custom, tmp_path / "model"))
    (model / "generation_config.json").write_text(json.dumps({"top_k": 7}))
    s = prompt.sampling(read_model_dir(model), _model_cls())
    # upstream's hard defaults (docs/qwen3.md, TTS generation loop), except what the
    # file sets
    assert s == {
        "do_sample": True,
        "top_k": 7,
        "top_p": 1.0,
        "temperature": 0.9,
        "repetition_penalty": 1.05,
        "subtalker_do_sample": True,
        "subtalker_top_k": 50,
        "subtalker_top_p": 1.0,
        "subtalker_temperature": 0.9,
        "max_new_tokens": 2048,
        "min_new_tokens": 2,
        "suppress": [128, 1152],
    }


def test_the_text_mode_is_the_entry_points_default(
    tiny_tts_custom: Path, tiny_tts_base: Path
):
    cls = _model_cls()
    assert prompt.text_mode(read_model_dir(tiny_tts_custom), cls) == "non_streaming"
    assert prompt.text_mode(read_model_dir(tiny_tts_base), cls) == "streaming"


def test_a_tokenizer_that_splits_the_role_is_refused():
    """upstream's generate slices ids [:, :3] / [:, 3:-5]: a tokenizer giving
    'assistant' as two tokens would feed a wrong prompt; refused, saying so."""
    tts = SimpleNamespace(
        _build_assistant_text=lambda t: _model_cls()._build_assistant_text(None, t)
    )
    words = {"<|im_start|>": 1, "<|im_end|>": 2, "assistant": 3, "\n": 4}

    def one_per_piece(text: str) -> dict[str, list[int]]:
        ids, rest = [], text
        while rest:
            piece = next((w for w in words if rest.startswith(w)), rest[0])
            ids.append(words.get(piece, 9))
            rest = rest[len(piece) :]
        return {"input_ids": ids}

    good = prompt.render_prompt(tts, one_per_piece)
    assert good == {
        "template": "<|im_start|>assistant\n{text}<|im_end|>\n<|im_start|>assistant\n",
        "role_tokens": 3,
        "tail_tokens": 5,
    }
    del words["assistant"]
    with pytest.raises(prompt.PromptError, match=r"splits the role .* into 11 tokens"):
        prompt.render_prompt(tts, one_per_piece)
