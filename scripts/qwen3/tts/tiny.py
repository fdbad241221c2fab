"""Tiny random Qwen3-TTS 12 Hz checkpoints, written by upstream's own classes.

``write_tiny_tts(dir, kind)`` lays out a Hugging Face directory as
Qwen/Qwen3-TTS-12Hz-0.6B-CustomVoice (kind "custom_voice") or -Base ("base")
has it: config.json, model.safetensors, generation_config.json (upstream's
generate defaults, some non-default so a reader visibly takes them from the file),
the tokenizer files, and ``speech_tokenizer/`` (the 12 Hz codec, see
scripts/qwen3/tts/tiny_codec.py). Tiny dims are the team contract; the special
codec ids are the real checkpoint's shifted into a small vocabulary, so none
equals upstream's code defaults (a code default that leaks shows, as the ncnn
port's eos 4198 vs 2150 did). The same (kind, seed) gives the same bytes.

The base kind's code predictor is narrower than the talker (hidden 32 vs 64), as
in the 1.7B checkpoints, so its ``small_to_mtp_projection`` is a real Linear; the
custom_voice kind has matching widths (Identity), as the 0.6B ones.

EOS: random weights never stop by themselves, so the ``codec_head`` row of
codec_eos is coupled to a few codes (``EOS_CODES``): greedy runs end with a real
EOS step after a text-dependent number of frames, and parity tests cover it.
Tests and scripts only (imports qwen_tts through upstream.py and torch).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Final, Literal

from scripts.qwen3.common import tiny_dims
from scripts.qwen3.tts import tiny_codec
from scripts.qwen3.tts.tiny_init import perturb, rescale_outputs
from scripts.qwen3.tts.tiny_tokenizer import SPECIAL_TOKENS, train_tokenizer
from scripts.qwen3.tts.upstream import import_qwen_tts, torch_threads

Kind = Literal["custom_voice", "base"]
KINDS: Final = ("custom_voice", "base")
#: Codebook size of the tiny codec (= code predictor vocab); the real one has 2048.
CODEBOOK: Final = 128
#: docs/qwen3.md, tiny models: the top 1024 talker ids are the suppressed specials.
TALKER_VOCAB: Final = CODEBOOK + 1024
#: The real checkpoint's ids (codebook 2048) shifted down by this, so they keep
#: their order and offsets from the codebook and stay below TALKER_VOCAB.
_SHIFT: Final = 2048 - CODEBOOK
#: Real 0.6B talker_config special ids (config.json of Qwen3-TTS-12Hz-0.6B-*).
_REAL_SPECIALS: Final = {
    "codec_pad_id": 2148,
    "codec_bos_id": 2149,
    "codec_eos_token_id": 2150,
    "codec_think_id": 2154,
    "codec_nothink_id": 2155,
    "codec_think_bos_id": 2156,
    "codec_think_eos_id": 2157,
}
_REAL_LANGUAGES: Final = {
    "chinese": 2055,
    "english": 2050,
    "japanese": 2058,
    "korean": 2064,
    "beijing_dialect": 2074,
    "sichuan_dialect": 2062,
}
#: CustomVoice speakers: (real codec row, dialect or False), two dialect ones.
_REAL_SPEAKERS: Final = {
    "serena": (3066, False),
    "ryan": (3061, False),
    "aiden": (2861, False),
    "eric": (2875, "sichuan_dialect"),
    "dylan": (2878, "beijing_dialect"),
}
#: What the talker and the code predictor share: the tiny decoder, and the
#: activation and norm epsilon upstream's TTS configs read.
_DECODER: Final[dict[str, Any]] = {
    **tiny_dims.DECODER,
    "hidden_act": "silu",
    "rms_norm_eps": 1e-6,
    "num_code_groups": 16,
}
TALKER_DIMS: Final[dict[str, Any]] = {
    **_DECODER,
    "vocab_size": TALKER_VOCAB,
    "rope_scaling": dict(tiny_dims.MROPE),
    "max_position_embeddings": tiny_dims.MAX_POSITIONS,
    "text_hidden_size": 48,
}
PREDICTOR_DIMS: Final[dict[str, dict[str, Any]]] = {
    "custom_voice": {"hidden_size": 64, "intermediate_size": 128},
    "base": {"hidden_size": 32, "intermediate_size": 64},  # != talker: a projection
}
_PREDICTOR_COMMON: Final[dict[str, Any]] = {
    **_DECODER,
    "vocab_size": CODEBOOK,
    "max_position_embeddings": 64,
}
#: ECAPA-TDNN (base only); enc_dim = talker hidden (the x-vector is a codec row).
SPEAKER_DIMS: Final[dict[str, Any]] = {
    "mel_dim": 128,
    "enc_dim": 64,
    "enc_channels": [32, 32, 32, 32, 96],
    "enc_kernel_sizes": [5, 3, 3, 3, 1],
    "enc_dilations": [1, 2, 3, 4, 1],
    "enc_attention_channels": 16,
    "enc_res2net_scale": 4,
    "enc_se_channels": 16,
    "sample_rate": 24000,
}
#: generation_config.json: upstream's keys (_merge_generate_kwargs). Values differ
#: from the hard defaults (do_sample True, 50, 1.0, 0.9, 1.05, 2048) where the
#: key allows, so a reader that falls back to code defaults shows it.
GENERATE_CONFIG: Final[dict[str, Any]] = {
    "do_sample": True,
    "top_k": 40,
    "top_p": 0.95,
    "temperature": 0.8,
    "repetition_penalty": 1.1,
    "subtalker_dosample": True,
    "subtalker_top_k": 30,
    "subtalker_top_p": 0.9,
    "subtalker_temperature": 0.7,
    "max_new_tokens": 600,
}
#: The base kind's file leaves these out, so upstream's hard defaults fill them
#: (the merge must take each key from the file or, missing, from the defaults).
BASE_OMITS: Final = (
    "subtalker_dosample",
    "subtalker_top_k",
    "subtalker_top_p",
    "subtalker_temperature",
)


def generate_config(kind: Kind) -> dict[str, Any]:
    """What generation_config.json of ``kind`` holds."""
    omit = BASE_OMITS if kind == "base" else ()
    return {k: v for k, v in GENERATE_CONFIG.items() if k not in omit}


#: Test texts the EOS calibration was measured on (parity tests may use others).
TEXTS: Final = {
    "en": "Hello, how are you today?",
    "zh": "今天天气很好，我们去公园散步吧。",
    "mixed": "我喜欢听音乐, and I like to read books.",
}
#: EOS: the codec rows of EOS_CODES carry EOS_PUSH on hidden axis EOS_AXIS, and
#: the codec_head row of codec_eos reads only that axis (EOS_GAIN). Elsewhere the
#: axis holds O(1) values, so EOS rarely wins; the step after greedy emits one of
#: EOS_CODES as code0, the final-normed hidden is ~8 on that axis and EOS wins.
#: The frames before are untouched (those rows were never an input yet), so a
#: run stops after an emergent, text-dependent number of frames (8 codes of 128:
#: ~16 frames on average). Measured (seed 0, greedy, cap 40, TEXTS x both text
#: modes x {serena, eric} / {x-vector of a 1.5 s tone, none}): 23 of 24 runs stop
#: after 3-31 frames; custom eric "mixed" auto non-streaming runs to the cap.
EOS_CODES: Final = tuple(range(5, CODEBOOK, 16))
EOS_AXIS: Final = 0
EOS_PUSH: Final = 100.0
EOS_GAIN: Final = 3.0


def talker_config(kind: Kind, tok: Any) -> dict[str, Any]:
    """talker_config of config.json (ids from the tokenizer and _REAL_* - _SHIFT)."""
    cfg = dict(TALKER_DIMS, text_vocab_size=len(tok))
    cfg.update({k: v - _SHIFT for k, v in _REAL_SPECIALS.items()})
    cfg["codec_language_id"] = {k: v - _SHIFT for k, v in _REAL_LANGUAGES.items()}
    speakers = _REAL_SPEAKERS if kind == "custom_voice" else {}
    cfg["spk_id"] = {name: row - _SHIFT for name, (row, _) in speakers.items()}
    cfg["spk_is_dialect"] = {name: d for name, (_, d) in speakers.items()}
    cfg["code_predictor_config"] = {**_PREDICTOR_COMMON, **PREDICTOR_DIMS[kind]}
    return cfg


def config(kind: Kind, tok: Any) -> Any:
    """The top Qwen3TTSConfig (model_type qwen3_tts)."""
    up = import_qwen_tts()
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    return up.configuration.Qwen3TTSConfig(
        talker_config=talker_config(kind, tok),
        # both kinds carry it (custom_voice builds no encoder): a reader never
        # sees upstream's full-size defaults
        speaker_encoder_config=dict(SPEAKER_DIMS),
        tokenizer_type="qwen3_tts_tokenizer_12hz",
        tts_model_size="0b6",
        tts_model_type=kind,
        im_start_token_id=ids["<|im_start|>"],
        im_end_token_id=ids["<|im_end|>"],
        tts_pad_token_id=ids["<tts_pad>"],
        tts_bos_token_id=ids["<tts_text_bos>"],
        tts_eos_token_id=ids["<tts_text_eod>"],
        torch_dtype="float32",
    )


def build(kind: Kind, seed: int = 0) -> tuple[Any, Any]:
    """(Qwen3TTSForConditionalGeneration fp32 eval, Qwen3TTSProcessor), unsaved."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    up = import_qwen_tts()
    tok = train_tokenizer()
    cfg = config(kind, tok)
    model = up.modeling.Qwen3TTSForConditionalGeneration(cfg).float().eval()
    perturb(model, seed)
    if model.speaker_encoder is not None:
        _calibrate_speaker(model, seed)
    _bias_eos(model, cfg)
    return model, up.processing.Qwen3TTSProcessor(tokenizer=tok)


def _calibrate_speaker(model: Any, seed: int) -> None:
    """Scale the ECAPA's last conv so an x-vector is as large as a codec row."""
    import numpy as np
    import torch

    up = import_qwen_tts()
    rng = np.random.default_rng(seed)
    clip = (0.1 * rng.standard_normal(24000)).astype(np.float32)
    mel = up.modeling.mel_spectrogram(
        torch.from_numpy(clip)[None], 1024, 128, 24000, 256, 1024, 0, 12000
    ).transpose(1, 2)
    rescale_outputs(model.speaker_encoder, {model.speaker_encoder.fc: 1.0}, mel)


def _bias_eos(model: Any, cfg: Any) -> None:
    """Couple EOS to EOS_CODES (see EOS_CODES): real weights, upstream's layout."""
    import torch

    talker = model.talker
    eos = cfg.talker_config.codec_eos_token_id
    with torch.no_grad():
        talker.codec_head.weight[eos] = 0.0
        talker.codec_head.weight[eos, EOS_AXIS] = EOS_GAIN
        rows = torch.tensor(EOS_CODES)
        talker.get_input_embeddings().weight[rows, EOS_AXIS] += EOS_PUSH


def _drop_speaker_model_type(path: Path) -> None:
    """Upstream's save writes speaker_encoder_config.model_type "", which its own
    Qwen3TTSSpeakerEncoderConfig (no **kwargs) refuses on load; drop it."""
    cfg = json.loads(path.read_text())
    cfg["speaker_encoder_config"].pop("model_type", None)
    path.write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")


def write_tiny_tts(out: Path | str, kind: Kind, seed: int = 0) -> Path:
    """Write the tiny ``kind`` checkpoint directory ``out`` and return it."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with torch_threads(1):
        model, processor = build(kind, seed)
        model.save_pretrained(out, safe_serialization=True)
        _drop_speaker_model_type(out / "config.json")
        processor.save_pretrained(out)
        # upstream reads this file with json.load (Qwen3TTSForConditionalGeneration
        # .from_pretrained): generate kwargs, not a transformers GenerationConfig
        (out / "generation_config.json").write_text(
            json.dumps(generate_config(kind), indent=2) + "\n"
        )
        tiny_codec.write_codec(out / "speech_tokenizer", seed)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the model directory to write")
    parser.add_argument("--kind", choices=KINDS, default="custom_voice")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    out = write_tiny_tts(args.out, args.kind, args.seed)
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        print(f"{path.stat().st_size:>10}  {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
