"""The one way into upstream qwen-tts 0.1.1 (the parity oracle): ``import_qwen_tts()``.

``import qwen_tts`` imports its 25 Hz tokenizer, which imports
``torchaudio.compliance.kaldi`` at module level. The PyPI torchaudio wheel is
CUDA-linked and fails to load on torch-cpu (``OSError: Could not load this
library: .../_torchaudio.so``), and scripts/_venv.sh does not install it at all.
Only the 25 Hz path calls it (kaldi fbank); the 12 Hz checkpoints never do. So
transformers is imported first (it probes for torchaudio while it imports and
must see the truth), then, only when the real torchaudio does not import,
``torchaudio``, ``torchaudio.compliance`` and ``torchaudio.compliance.kaldi``
become empty stub modules in ``sys.modules`` (docs/qwen3.md, tiny models). Any use of a
stub raises an AttributeError that says so.

Scripts and tests only: never the board runtime.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.machinery
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

#: The modules qwen-tts imports from torchaudio (core/tokenizer_25hz/vq/speech_vq.py).
TORCHAUDIO_MODULES: Final = (
    "torchaudio",
    "torchaudio.compliance",
    "torchaudio.compliance.kaldi",
)
#: Marks a stub module (``getattr(sys.modules["torchaudio"], STUB_MARK, False)``).
STUB_MARK: Final = "__hexvoice_stub__"


@dataclass(frozen=True)
class QwenTts:
    """The upstream modules the oracle, tiny writer and gates use."""

    package: types.ModuleType  # qwen_tts
    inference: types.ModuleType  # inference/qwen3_tts_model.py (Qwen3TTSModel)
    speech_tokenizer: types.ModuleType  # inference/qwen3_tts_tokenizer.py
    configuration: types.ModuleType  # core/models/configuration_qwen3_tts.py
    modeling: types.ModuleType  # core/models/modeling_qwen3_tts.py
    processing: types.ModuleType  # core/models/processing_qwen3_tts.py
    codec_configuration: types.ModuleType  # core/tokenizer_12hz/configuration_*_v2.py
    codec_modeling: types.ModuleType  # core/tokenizer_12hz/modeling_*_v2.py
    torchaudio_stubbed: bool

    @property
    def Qwen3TTSModel(self) -> Any:  # noqa: N802 (upstream's class name)
        return self.inference.Qwen3TTSModel

    @property
    def Qwen3TTSTokenizer(self) -> Any:  # noqa: N802
        return self.speech_tokenizer.Qwen3TTSTokenizer


def _stub_missing(name: str) -> Any:
    def missing(attr: str) -> Any:
        raise AttributeError(
            f"{name}.{attr}: torchaudio is a hexvoice stub (the PyPI wheel is "
            "CUDA-linked; only qwen-tts's 25 Hz tokenizer needs it)"
        )

    return missing


def _stub_torchaudio() -> None:
    """Empty ``torchaudio`` modules in sys.modules, each an attribute of its parent."""
    for name in TORCHAUDIO_MODULES:
        sys.modules.pop(name, None)  # a half-imported real one
    parent = None
    for name in TORCHAUDIO_MODULES:
        mod = types.ModuleType(name, "hexvoice stub: the real torchaudio does not load")
        mod.__spec__ = importlib.machinery.ModuleSpec(name, None, origin="stub")
        mod.__path__ = []  # a package, so the submodule import resolves
        setattr(mod, STUB_MARK, True)
        mod.__getattr__ = _stub_missing(name)  # type: ignore[method-assign]
        sys.modules[name] = mod
        if parent is not None:
            setattr(parent, name.rsplit(".", 1)[1], mod)
        parent = mod


def _torchaudio_imports() -> bool:
    try:
        importlib.import_module(TORCHAUDIO_MODULES[-1])
    except (ImportError, OSError):
        return False
    return True


@functools.cache
def import_qwen_tts() -> QwenTts:
    """Import qwen_tts (transformers first, torchaudio stubbed only if broken)."""
    import transformers  # noqa: F401  (before any torchaudio stub: it probes for it)

    stubbed = False
    if not _torchaudio_imports():
        _stub_torchaudio()
        stubbed = True
    mod = importlib.import_module
    return QwenTts(
        package=mod("qwen_tts"),
        inference=mod("qwen_tts.inference.qwen3_tts_model"),
        speech_tokenizer=mod("qwen_tts.inference.qwen3_tts_tokenizer"),
        configuration=mod("qwen_tts.core.models.configuration_qwen3_tts"),
        modeling=mod("qwen_tts.core.models.modeling_qwen3_tts"),
        processing=mod("qwen_tts.core.models.processing_qwen3_tts"),
        codec_configuration=mod(
            "qwen_tts.core.tokenizer_12hz.configuration_qwen3_tts_tokenizer_v2"
        ),
        codec_modeling=mod(
            "qwen_tts.core.tokenizer_12hz.modeling_qwen3_tts_tokenizer_v2"
        ),
        torchaudio_stubbed=stubbed,
    )


@contextlib.contextmanager
def torch_threads(n: int = 1) -> Iterator[None]:
    """Run torch on ``n`` intra-op threads while inside.

    The tiny models' ops take microseconds; on a shared, loaded box torch's
    default thread pool spends milliseconds per op waking its threads (a greedy
    frame: 1.4 s on 2 threads vs 0.2 s on 1, measured), so the tiny writer and
    the oracle run single-threaded."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
