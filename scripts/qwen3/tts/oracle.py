"""Upstream reference runs of Qwen3-TTS 12 Hz (qwen-tts 0.1.1): the parity oracle.

Every answer comes from upstream's own code on CPU fp32: ``Qwen3TTSModel`` loads
the directory, its ``_merge_generate_kwargs`` merges generation_config.json over
its hard defaults, and ``Qwen3TTSForConditionalGeneration.generate`` builds the
prompt and runs the talker, whose every step runs the code predictor's own
``generate``. Forward hooks read what the loop computes: the raw ``codec_head``
logits of each talker step, the raw ``lm_head[k]`` logits of each predictor step,
and the talker's prompt (``talker.generate``'s inputs_embeds and
trailing_text_hidden). Teacher forcing uses the same loop: the hooks also hand on
logits that force the given codes (``Generation.talker_logits`` stay raw).
Codec and speaker references are in oracle_audio.py.

Upstream quirks the engine must reproduce (docs/qwen3.md, TTS generation loop):
- Frames are assembled one step late: talker step g picks code0 of frame g;
  the predictor fills codes 1..15 of frame g inside talker step g + 1. So n
  frames take n + 1 talker steps, and the last code0 (EOS, or the
  max_new_tokens-th) never becomes a frame.
- ``generate`` cuts the frames at the first frame whose code0 is EOS; with batch 1
  that never happens (EOS ends the loop first), so codes = all frames.
- min_new_tokens = 2 masks EOS on the first two talker steps; suppress =
  [vocab - 1024, vocab) minus EOS; repetition penalty over generated code0s only.
- Speakers and languages are lowercased; chinese/auto with a dialect speaker
  takes the dialect's language id.
Scripts and tests only.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np

from scripts.qwen3.tts.upstream import import_qwen_tts, torch_threads

#: Default frame cap of the oracle's runs (the file's max_new_tokens is for real
#: speech; tiny random runs may never stop). Engines under test use the same cap.
MAX_NEW_TOKENS: Final = 40
#: upstream's generate, greedy: talker and predictor (do_sample / subtalker_dosample)
GREEDY: Final = {"do_sample": False, "subtalker_dosample": False}
#: What a forced logit row holds: the forced id high, every other id low.
_FORCE_HIGH: Final = 1e9
_FORCE_LOW: Final = -1e9


@dataclass(frozen=True)
class Generation:
    """One upstream run: n frames, n + 1 talker steps."""

    codes: np.ndarray  # int64 [n, 16]: what generate returns
    code0: np.ndarray  # int64 [n + 1]: every talker pick, incl. the last (EOS or cap)
    talker_logits: np.ndarray  # float32 [n + 1, V]: raw codec_head rows
    predictor_logits: np.ndarray  # float32 [n, 15, Vc]: raw lm_head[0..14] rows
    eos: int  # the checkpoint's codec_eos_token_id

    @property
    def stopped(self) -> bool:
        """True when the run ended with EOS (not at max_new_tokens)."""
        return int(self.code0[-1]) == self.eos


@dataclass(frozen=True)
class Prompt:
    """The talker's input as upstream's generate builds it."""

    embeds: np.ndarray  # float32 [P, Ht]: the prefill rows
    trailing: np.ndarray  # float32 [R, Ht]: added to the input of step g < R
    tts_pad: np.ndarray  # float32 [Ht]: added from step R on


@functools.lru_cache(maxsize=4)
def load(model_dir: Path | str) -> Any:
    """Upstream's Qwen3TTSModel of a directory, fp32, eval, CPU (cached: read-only)."""
    import torch

    up = import_qwen_tts()
    with torch_threads(1):
        tts = up.Qwen3TTSModel.from_pretrained(str(model_dir), dtype=torch.float32)
    tts.model.float().eval()
    return tts


def default_non_streaming(tts: Any) -> bool:
    """Upstream's default text mode: generate_custom_voice True, voice_clone False."""
    return tts.model.tts_model_type != "base"


#: who speaks and how: (language, speaker, xvector, non_streaming_mode)
Voice = tuple[str, "str | None", "np.ndarray | None", "bool | None"]


def _generate_kwargs(tts: Any, text: str, voice: Voice, **gen: Any) -> dict[str, Any]:
    """What upstream's generate_custom_voice / generate_voice_clone pass on."""
    import torch

    language, speaker, xvector, non_streaming_mode = voice
    tts._validate_languages([language])
    kw: dict[str, Any] = {
        "input_ids": tts._tokenize_texts([tts._build_assistant_text(text)]),
        "languages": [language],
        "non_streaming_mode": (
            default_non_streaming(tts)
            if non_streaming_mode is None
            else non_streaming_mode
        ),
    }
    if xvector is not None:  # generate_voice_clone, x_vector_only_mode=True
        xv = torch.as_tensor(np.asarray(xvector, np.float32))
        kw["voice_clone_prompt"] = {
            "ref_code": [None],
            "ref_spk_embedding": [xv],
            "x_vector_only_mode": [True],
            "icl_mode": [False],
        }
    elif speaker is not None:
        tts._validate_speakers([speaker])
        kw["speakers"] = [speaker]
    return {**kw, **tts._merge_generate_kwargs(**gen)}


@dataclass
class _Tape:
    talker: list[np.ndarray] = field(default_factory=list)
    predictor: list[tuple[int, np.ndarray]] = field(default_factory=list)
    talker_inputs: dict[str, Any] = field(default_factory=dict)
    sequences: Any = None


def _forced(out: Any, index: int) -> Any:
    forced = out.clone()
    forced[..., -1, :] = _FORCE_LOW
    forced[..., -1, index] = _FORCE_HIGH
    return forced


@contextmanager
def _recording(talker: Any, force: np.ndarray | None, eos: int) -> Iterator[_Tape]:
    """Hooks on codec_head, lm_head[k] and talker.generate; with ``force``
    (codes [n, 16]) the steps are forced onto it, then onto EOS."""
    tape = _Tape()

    def on_head(_m: Any, _i: Any, out: Any) -> Any:
        step = len(tape.talker)
        tape.talker.append(out[0, -1].detach().float().numpy().copy())
        if force is None:
            return None
        return _forced(out, int(force[step, 0]) if step < len(force) else eos)

    def on_predictor(k: int, _m: Any, _i: Any, out: Any) -> Any:
        frame = len(tape.predictor) // 15
        tape.predictor.append((k, out[0, -1].detach().float().numpy().copy()))
        return None if force is None else _forced(out, int(force[frame, k + 1]))

    real_generate = talker.generate

    def generate(*args: Any, **kwargs: Any) -> Any:
        tape.talker_inputs = kwargs
        result = real_generate(*args, **kwargs)
        tape.sequences = result.sequences
        return result

    handles = [talker.codec_head.register_forward_hook(on_head)]
    for k, head in enumerate(talker.code_predictor.lm_head):
        handles.append(head.register_forward_hook(functools.partial(on_predictor, k)))
    talker.generate = generate  # instance attribute over the class method
    try:
        yield tape
    finally:
        del talker.generate
        for h in handles:
            h.remove()


def _run(tts: Any, kwargs: dict[str, Any], force: np.ndarray | None) -> Generation:
    import torch

    model = tts.model
    eos = int(model.config.talker_config.codec_eos_token_id)
    with (
        torch_threads(1),
        torch.no_grad(),
        _recording(model.talker, force, eos) as tape,
    ):
        codes_list, _ = model.generate(**kwargs)
    ks = [k for k, _ in tape.predictor]
    if ks != [i % 15 for i in range(len(ks))]:
        raise AssertionError(f"predictor heads ran out of order: {ks}")
    vc = model.config.talker_config.code_predictor_config.vocab_size
    pred = np.stack([row for _, row in tape.predictor]) if ks else np.zeros((0, vc))
    return Generation(
        codes=codes_list[0].cpu().numpy().astype(np.int64),
        code0=tape.sequences[0].cpu().numpy().astype(np.int64),
        talker_logits=np.stack(tape.talker).astype(np.float32),
        predictor_logits=pred.reshape(-1, 15, vc).astype(np.float32),
        eos=eos,
    )


def greedy(
    tts: Any,
    text: str,
    language: str = "auto",
    speaker: str | None = None,
    xvector: np.ndarray | None = None,
    non_streaming_mode: bool | None = None,
    max_new_tokens: int = MAX_NEW_TOKENS,
    **gen: Any,
) -> Generation:
    """Greedy talker and predictor (do_sample / subtalker_dosample False); the
    other knobs (repetition_penalty ...) from generation_config.json unless given.
    ``speaker`` (custom_voice), ``xvector`` [D] (base clone), or neither (the
    speaker-less prompt). max_new_tokens >= 2: with 1, upstream's generate has
    no frame to stack and raises."""
    if max_new_tokens < 2:
        raise ValueError(f"max_new_tokens must be >= 2, got {max_new_tokens}")
    voice = (language, speaker, xvector, non_streaming_mode)
    kw = _generate_kwargs(
        tts, text, voice, **GREEDY, max_new_tokens=max_new_tokens, **gen
    )
    return _run(tts, kw, None)


def sample(
    tts: Any,
    text: str,
    seed: int,
    language: str = "auto",
    speaker: str | None = None,
    xvector: np.ndarray | None = None,
    non_streaming_mode: bool | None = None,
    max_new_tokens: int = MAX_NEW_TOKENS,
    **gen: Any,
) -> Generation:
    """Sampled run (generation_config.json's sampling) after torch.manual_seed(seed):
    for distribution-level checks only (torch's RNG is not the engine's)."""
    import torch

    voice = (language, speaker, xvector, non_streaming_mode)
    kw = _generate_kwargs(tts, text, voice, max_new_tokens=max_new_tokens, **gen)
    torch.manual_seed(seed)
    return _run(tts, kw, None)


def teacher_forced(
    tts: Any,
    text: str,
    codes: np.ndarray | Sequence[Sequence[int]],
    language: str = "auto",
    speaker: str | None = None,
    xvector: np.ndarray | None = None,
    non_streaming_mode: bool | None = None,
    **gen: Any,
) -> Generation:
    """Upstream's loop forced onto ``codes`` [n, 16] (n >= 2: min_new_tokens masks
    an earlier EOS), then EOS: talker_logits [n + 1, V] and predictor_logits
    [n, 15, Vc] are the raw logits at each forced position."""
    force = np.asarray(codes, np.int64)
    if force.ndim != 2 or force.shape[1] != 16 or len(force) < 2:
        raise ValueError(f"codes must be [n >= 2, 16], got {force.shape}")
    voice = (language, speaker, xvector, non_streaming_mode)
    kw = _generate_kwargs(
        tts, text, voice, **GREEDY, max_new_tokens=len(force) + 1, **gen
    )
    run = _run(tts, kw, force)
    if not np.array_equal(run.codes, force):
        raise AssertionError("teacher forcing did not reproduce the forced codes")
    return run


def prompt(
    tts: Any,
    text: str,
    language: str = "auto",
    speaker: str | None = None,
    xvector: np.ndarray | None = None,
    non_streaming_mode: bool | None = None,
) -> Prompt:
    """The talker prefill rows and trailing text rows upstream builds (a 2-step
    run: with one, upstream's generate has no frame to stack and fails)."""
    import torch

    voice = (language, speaker, xvector, non_streaming_mode)
    kw = _generate_kwargs(tts, text, voice, **GREEDY, max_new_tokens=2)
    model = tts.model
    eos = int(model.config.talker_config.codec_eos_token_id)
    with torch_threads(1), torch.no_grad(), _recording(model.talker, None, eos) as tape:
        model.generate(**kw)
    inputs = tape.talker_inputs
    return Prompt(
        embeds=inputs["inputs_embeds"][0].float().numpy(),
        trailing=inputs["trailing_text_hidden"][0].float().numpy(),
        tts_pad=inputs["tts_pad_embed"].reshape(-1).float().numpy(),
    )
