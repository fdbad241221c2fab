"""The engine's prompt ids against upstream's (template, context, forced
language, pad expansion, tokenizer call), and the language hints."""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.engines.qwen3.asr.prompt import LANGUAGE_CODES, language_name
from daemon.sdk.local import LocalEngine

oracle = pytest.importorskip("scripts.qwen3.asr.oracle")

SUPPORTED = ("Chinese", "English", "Cantonese", "Filipino")


@pytest.fixture(scope="module")
def processor(tiny_asr_model: Path):  # type: ignore[no-untyped-def]
    return oracle.load(tiny_asr_model)[1]


@pytest.mark.parametrize(
    ("context", "language", "n_audio"),
    [
        ("", None, 13),
        ("", "English", 52),
        ("Names: Ada Lovelace, 李白.", "Chinese", 7),
        ("{audio} {context} braces stay text", None, 3),
        ("", None, 0),
    ],
)
def test_prompt_ids_equal_upstream(cpu: LocalEngine, processor, context: str,
                                   language: str | None, n_audio: int) -> None:  # type: ignore[no-untyped-def]  # fmt: skip
    builder = cpu.engine.model.builder
    prompt = builder.build(context, language, n_audio)
    assert prompt.ids.tolist() == oracle.prompt_ids(
        processor, n_audio, context, language
    )
    assert len(prompt.audio_positions) == n_audio


@pytest.mark.parametrize(
    ("hint", "name"),
    [
        ("zh", "Chinese"),
        ("en_US", "English"),
        ("en-GB", "English"),
        ("yue", "Cantonese"),
        ("tl", "Filipino"),
        ("cHINese", "Chinese"),
        (" English ", "English"),
    ],  # fmt: skip
)
def test_language_hints(hint: str, name: str) -> None:
    assert language_name(hint, SUPPORTED) == name


def test_unknown_language_names_the_supported_ones() -> None:
    with pytest.raises(ValueError, match=r"'Klingon'; supported: zh \(Chinese\), "):
        language_name("Klingon", SUPPORTED)
    with pytest.raises(ValueError, match="unsupported language 'de'"):
        language_name("de", SUPPORTED)  # known code, not in this bundle


def test_every_upstream_language_has_a_code() -> None:
    utils = pytest.importorskip("qwen_asr.inference.utils")
    assert set(LANGUAGE_CODES.values()) == set(utils.SUPPORTED_LANGUAGES)
