"""Each engine's graph calls for a 3-sentence text: in total, and before the
first audio leaves (streaming). Counts follow the engines' own schedules; the
text-dependent sizes (phones, tokens per second) are ASSUMED constants below.

Every sentence lasts SENTENCE_S: the reference port's 3-sentence headline text
(12.34 s of speech, docs/board.md, reference port timings) split evenly.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from daemon.sdk.audio.windows import windows
from scripts.bench.qwen3.tts import sizes as tq
from scripts.gptsovits.shapes import FRAMES_PER_TOKEN, FULL, GraphShapes

SENTENCES: Final = 3
SENTENCE_S: Final = 12.34 / SENTENCES
#: docs/board.md, reference port timings: 25 semantic tokens per second of speech
GSV_TOKENS_PER_S: Final = 25
#: ASSUMED: a 5 s reference clip (upstream allows 3-10 s) -> 125 prompt tokens
#: + the 0.3 s of zeros upstream appends (8 tokens at 25 Hz)
GSV_PROMPT_TOKENS: Final = 5 * GSV_TOKENS_PER_S + 8
#: ASSUMED Mandarin: ~4.5 syllables/s, initial + final = 2 phones each
GSV_PHONES_PER_S: Final = 9
#: ASSUMED: at most 8 polyphonic chars per sentence (one g2pw call of 8 rows)
GSV_G2PW_CALLS: Final = 1
#: ASSUMED English (espeak IPA): ~14 phonemes/s; ids = 2 x phonemes + 3
PIPER_PHONEMES_PER_S: Final = 14
#: ASSUMED: Qwen3-TTS text tokens per second of speech (~3 English words/s)
QWEN_TEXT_TOKENS_PER_S: Final = 4
#: ASSUMED codec left contexts (the full model's are measured at build time):
#: upstream chunked_decode's 25 frames (docs/qwen3.md, codec decoder), for both windows
QWEN_CODEC_CONTEXT: Final = 25
#: ASSUMED Qwen3-ASR: output tokens per second of speech; 100 mel frames/s
ASR_TOKENS_PER_S: Final = 4
ASR_MEL_PER_S: Final = 100
ASR_WINDOW_MEL: Final = 800  # n_window_infer (qwen3/asr/sizes.py AUDIO_FULL)


@dataclass(frozen=True)
class Schedule:
    voice: str
    audio_s: float
    total: Mapping[str, int]  # graph key -> calls for the whole text
    first: Mapping[str, int]  # graph key -> calls before the first audio
    notes: tuple[str, ...] = field(default_factory=tuple)

    def seconds(self, per_call: Mapping[str, float], first: bool = False) -> float:
        calls = self.first if first else self.total
        return sum(n * per_call[g] for g, n in calls.items())

    def rtf(self, per_call: Mapping[str, float]) -> float:
        return self.seconds(per_call) / self.audio_s

    def ttfa(self, per_call: Mapping[str, float]) -> float:
        return self.seconds(per_call, first=True)


def _n_windows(frames: int, window: int, overlap: int) -> int:
    return sum(1 for _ in windows(frames, window, overlap))


def gsv(shapes: GraphShapes = FULL) -> Schedule:
    total: Counter[str] = Counter()
    first: Counter[str] = Counter()
    for i in range(SENTENCES):
        tokens = round(GSV_TOKENS_PER_S * SENTENCE_S)
        s = GSV_PROMPT_TOKENS + round(GSV_PHONES_PER_S * SENTENCE_S)
        # engine.py: the bucket for the prompt + the segment's token cap
        bucket = shapes.kv_bucket_for(s + shapes.max_new_tokens)
        frames = FRAMES_PER_TOKEN * tokens
        calls = Counter(
            {
                "g2pw": GSV_G2PW_CALLS,
                "bert": 1,
                "t2s_prefill": 1,
                f"t2s_decode_{bucket}": tokens,
                "vits_enc": 1,
            }
        )
        gen = _n_windows(frames, shapes.gen_window, shapes.gen_overlap)
        if i == 0:
            first = calls + Counter({"vits_gen": 1})
        total += calls + Counter({"vits_gen": gen})
    return Schedule(
        "gpt-sovits (full size)",
        SENTENCES * SENTENCE_S,
        total,
        first,
        (
            f"prompt {GSV_PROMPT_TOKENS} tokens, {GSV_PHONES_PER_S} phones/s, "
            f"{GSV_TOKENS_PER_S} tokens/s",
        ),
    )


def piper(
    phoneme_buckets: tuple[int, ...],
    frame_buckets: tuple[int, ...],
    window: int,
    overlap: int,
    rate: int,
    hop: int,
    *,
    first: int | None = None,
    sizes: tuple[int, ...] = (),
) -> Schedule:
    """`first`/`sizes`: the build's first and other decoder window sizes
    (scripts/piper/convert.py), windowed as the engine does (windows.plan)."""

    def bucket(n: int, sizes: tuple[int, ...]) -> int:
        return next((b for b in sizes if n <= b), sizes[-1])

    ids = 2 * round(PIPER_PHONEMES_PER_S * SENTENCE_S) + 3
    frames = round(SENTENCE_S * rate / hop)
    calls = Counter(
        {
            f"enc_P{bucket(ids, phoneme_buckets)}": 1,
            f"flow_F{bucket(frames, frame_buckets)}": 1,
        }
    )
    wins = list(windows(frames, window, overlap, first=first, sizes=sizes))
    total = Counter({k: v * SENTENCES for k, v in calls.items()})
    for w in wins:
        total[f"dec_W{w.size}"] += SENTENCES
    return Schedule(
        "piper en_US-joe-medium",
        SENTENCES * SENTENCE_S,
        total,
        calls + Counter({f"dec_W{wins[0].size}": 1}),
        (f"{ids} phoneme ids, {frames} frames per sentence",),
    )


def qwen3_tts(d: tq.Dims | None = None) -> Schedule:
    """The build's defaults (scripts/qwen3/tts/pipeline/options.py): the first
    FIRST_FRAMES in the smallest codec window, then CODEC_WINDOWS."""
    from scripts.qwen3.tts.pipeline.options import CODEC_WINDOWS, FIRST_FRAMES

    d = d or tq.Dims()
    first_frames = FIRST_FRAMES
    codec_windows = tuple(w.frames for w in CODEC_WINDOWS)
    frames = round(tq.FRAMES_PER_S * SENTENCE_S)
    text = math.ceil(QWEN_TEXT_TOKENS_PER_S * SENTENCE_S / 32)
    prefill = f"talker_prefill_{d.prefill[0]}"
    step = {"cp_step": tq.GROUPS, f"talker_decode_{d.kv_len}": 1}
    # stream.py: first_frames in the smallest window, then window i >= 1 in
    # codec_windows[min(i - 1, last)], each re-decoding its left context
    codec: Counter[str] = Counter({f"codec_{codec_windows[0]}": 1})
    done, i = first_frames, 1
    while done < frames:
        w = codec_windows[min(i - 1, len(codec_windows) - 1)]
        codec[f"codec_{w}"] += 1
        done, i = done + w - QWEN_CODEC_CONTEXT, i + 1
    per = Counter({"text_proj": text, prefill: 1})
    per.update({k: v * frames for k, v in step.items()})
    total = Counter({k: v * SENTENCES for k, v in (per + codec).items()})
    first = Counter({"text_proj": text, prefill: 1, f"codec_{codec_windows[0]}": 1})
    first.update({k: v * first_frames for k, v in step.items()})
    return Schedule(
        "qwen3-tts 0.6B",
        SENTENCES * SENTENCE_S,
        total,
        first,
        (
            f"{frames} frames/sentence x (1 talker step + {tq.GROUPS} cp_step)",
            f"codec context {QWEN_CODEC_CONTEXT} ASSUMED",
        ),
    )


def qwen3_asr() -> Schedule:
    """Transcribing the same 12.34 s (as one utterance): 'first' = first token."""
    audio = SENTENCES * SENTENCE_S
    enc = math.ceil(audio * ASR_MEL_PER_S / ASR_WINDOW_MEL)
    tokens = round(ASR_TOKENS_PER_S * audio)
    return Schedule(
        "qwen3-asr 0.6B (transcribe)",
        audio,
        {"encoder": enc, "prefill_512": 1, "decode_1024": tokens},
        {"encoder": enc, "prefill_512": 1},
        (f"{tokens} output tokens; 'TTFA' = time to first token",),
    )
