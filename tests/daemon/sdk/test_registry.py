"""The entry-point registry: engines by id and by task (installed entry points
plus the test engines' throw-away site)."""

from __future__ import annotations

import pytest

from daemon.sdk.registry import ENTRY_POINT_GROUP, engine_class, engines
from tests.engine_site import LICENSED_ENGINE, TONE_ENGINE, VAD_ENGINE, engine_site

#: what pyproject.toml registers
INSTALLED_TTS = {"piper-vits", "gpt-sovits-v2pro", "qwen3-tts"}
INSTALLED_ASR = {"qwen3-asr"}


@pytest.fixture
def test_site(tmp_path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(engine_site(tmp_path / "site")))


def test_engines_are_listed_by_task(test_site):
    tts, asr = engines("tts"), engines("asr")
    assert set(tts) == INSTALLED_TTS | {TONE_ENGINE, LICENSED_ENGINE}
    assert set(asr) == INSTALLED_ASR | {VAD_ENGINE}
    assert list(tts) == sorted(tts)  # sorted by id
    assert all(cls.task == "tts" for cls in tts.values())
    assert asr[VAD_ENGINE] is engine_class(VAD_ENGINE)


def test_without_the_test_site_only_installed_engines_are_listed():
    assert set(engines("tts")) >= INSTALLED_TTS
    assert set(engines("asr")) >= INSTALLED_ASR
    assert TONE_ENGINE not in engines("tts") and VAD_ENGINE not in engines("asr")


def test_unknown_task_is_refused():
    with pytest.raises(ValueError, match="task must be one of"):
        engines("stt")  # type: ignore[arg-type]


def test_unknown_engine_lists_what_is_installed():
    with pytest.raises(LookupError, match="no engine 'nope' registered") as info:
        engine_class("nope")
    assert "piper-vits" in str(info.value)


def _site_with(tmp_path, monkeypatch, name: str, ref: str) -> None:  # noqa: ANN001
    dist = tmp_path / "broken_site" / "hexvoice_broken-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: hexvoice-broken\nVersion: 0\n"
    )
    (dist / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{name} = {ref}\n")
    monkeypatch.syspath_prepend(str(tmp_path / "broken_site"))


def test_an_engine_class_without_a_task_is_refused(tmp_path, monkeypatch):
    _site_with(tmp_path, monkeypatch, "no-task", "daemon.sdk.cancel:CancelToken")
    with pytest.raises(TypeError, match="'no-task'.*declares task None"):
        engine_class("no-task")
    with pytest.raises(TypeError, match="no-task"):
        engines("tts")


def test_an_engine_that_cannot_be_imported_names_itself(tmp_path, monkeypatch):
    _site_with(tmp_path, monkeypatch, "gone", "daemon.engines.nope:Gone")
    with pytest.raises(ImportError, match="engine 'gone'.*cannot be imported"):
        engines("asr")
