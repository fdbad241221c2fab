"""Reference voices at load: the approximate-prompt warning."""

from __future__ import annotations

import dataclasses
import logging

import pytest

from daemon.engines.gptsovits import layout as L
from daemon.engines.gptsovits.tables import load_references
from daemon.sdk.bundles.manifest import Bundle


def _params(bundle: Bundle) -> L.GsvParams:
    return L.GsvParams.from_mapping(bundle.params)


def test_voice_built_without_hubert_warns(
    gsv_bundle: Bundle, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, "daemon.engines.gptsovits.tables"):
        refs = load_references(gsv_bundle, _params(gsv_bundle))
    assert set(refs) == set(gsv_bundle.voices)
    for entry in gsv_bundle.voices.values():
        assert (entry or {})[L.REF_PROMPT_SEMANTIC] == L.PROMPT_APPROXIMATE
    assert "prompt semantic tokens are approximate" in caplog.text
    assert "--hubert" in caplog.text


def test_voice_with_exact_prompt_is_quiet(
    gsv_bundle: Bundle, caplog: pytest.LogCaptureFixture
) -> None:
    voices = {
        name: {**(entry or {}), L.REF_PROMPT_SEMANTIC: L.PROMPT_HUBERT}
        for name, entry in gsv_bundle.voices.items()
    }
    exact = dataclasses.replace(gsv_bundle, voices=voices)
    with caplog.at_level(logging.WARNING, "daemon.engines.gptsovits.tables"):
        load_references(exact, _params(exact))
    assert "approximate" not in caplog.text
