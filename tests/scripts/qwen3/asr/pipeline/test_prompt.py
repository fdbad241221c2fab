"""params.prompt is what upstream builds: the template filled in the engine's way
(str.replace of {context}, {audio}, {language}) gives upstream's own prompt; a
template the engine cannot fill is refused naming what it renders."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from daemon.engines.qwen3.asr.params import AsrParams
from scripts.qwen3.asr import oracle
from scripts.qwen3.asr.pipeline import prompt
from scripts.qwen3.asr.pipeline.context import BuildContext
from scripts.qwen3.asr.pipeline.params import params
from tests.qwen3_bundles import asr_context


def _context(model_dir: Path, work: Path) -> BuildContext:
    return asr_context(model_dir, work, 128, 192)


@pytest.fixture(scope="module")
def built(tiny_asr_model: Path, tmp_path_factory) -> BuildContext:
    return _context(tiny_asr_model, tmp_path_factory.mktemp("work"))


def _fill(p: AsrParams, context: str, pads: str, language: str | None) -> str:
    """The prompt as the engine fills it (str.replace of the fields)."""
    text = p.prompt.template.replace("{context}", context).replace("{audio}", pads)
    if language:
        text += p.prompt.language_suffix.replace("{language}", language)
    return text


@pytest.mark.parametrize(
    "context,language", [("", None), ("Names: Zhang Wei.", "English"), ("", "Chinese")]
)
def test_the_filled_template_is_upstreams_prompt(built, context, language):
    p = AsrParams.from_mapping(params(built))
    processor = built.asr.processor
    ids = oracle.prompt_ids(processor, 7, context, language)
    text = _fill(p, context, processor.audio_token * 7, language)
    assert processor.tokenizer(text)["input_ids"] == ids


def test_ids_come_from_config_and_tokenizer(built):
    p = AsrParams.from_mapping(params(built))
    tok = built.asr.processor.tokenizer
    assert p.tokens.audio_pad == built.src.config.thinker_config.audio_token_id
    assert p.tokens.eos == tuple(oracle.eos_ids(built.asr.processor))
    assert tok.convert_ids_to_tokens([p.tokens.im_start, p.tokens.audio_end]) == [
        "<|im_start|>",
        "<|audio_end|>",
    ]
    assert p.languages[:2] == ("Chinese", "English") and len(p.languages) == 30
    assert p.mel.window_chunks == 4 and p.max_new_tokens == 512
    assert prompt.upstream_eos() == [151645, 151643]  # the real vocabulary's


def test_a_template_that_repeats_the_context_is_refused(tiny_asr_model, tmp_path):
    model = Path(shutil.copytree(tiny_asr_model, tmp_path / "model"))
    jinja = model / "chat_template.jinja"
    jinja.write_text(
        jinja.read_text().replace(
            "{{ message['content'] }}",
            "{{ message['content'] }}{{ message['content'] }}",
        )
    )
    ctx = _context(model, tmp_path / "work")
    with pytest.raises(prompt.PromptError, match="does not render the context once"):
        prompt.render_prompt(ctx.asr)
