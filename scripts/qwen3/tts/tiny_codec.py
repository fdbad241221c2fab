"""The tiny 12 Hz codec (``speech_tokenizer/``) of the tiny Qwen3-TTS checkpoints.

``write_codec(dir)`` saves upstream's Qwen3TTSTokenizerV2Model (config.json,
model.safetensors) and its feature extractor (preprocessor_config.json), as the
Qwen3-TTS-Tokenizer-12Hz directory has them. The decoder keeps the real
upsampling (2·2 then 8·5·4·3 = 1920 samples per 12.5 Hz frame at 24 kHz) and the
real sliding window 72, with tiny widths. The Mimi encoder (ICL only, out of
scope) is tiny too and left at upstream's init (seeded).

Random init (docs/qwen3.md, export findings): after
``tiny_init.perturb`` every decoder conv is scaled in forward order (LSUV) so its output
std on random codes is 1 (residual branches RESIDUAL_STD, the last conv OUTPUT_STD), so
the wave is audible and almost never reaches the ±1 clamp.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from scripts.qwen3.tts.tiny_init import perturb, rescale_outputs
from scripts.qwen3.tts.upstream import import_qwen_tts

SAMPLE_RATE: Final = 24000
SAMPLES_PER_FRAME: Final = 1920
DECODER_DIMS: Final[dict[str, Any]] = {
    "codebook_size": 128,  # = the talker's codebook (tiny.CODEBOOK)
    "codebook_dim": 16,  # the RVQ works at codebook_dim // 2 (real 512 -> 256)
    "latent_dim": 32,
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "sliding_window": 72,  # as real: a window of 16 frames never reaches it
    "max_position_embeddings": 8000,
    "rope_theta": 10000.0,
    "num_quantizers": 16,
    "upsample_rates": [8, 5, 4, 3],
    "upsampling_ratios": [2, 2],
    "decoder_dim": 48,
}
ENCODER_DIMS: Final[dict[str, Any]] = {
    "hidden_size": 32,
    "num_filters": 4,
    "num_residual_layers": 1,
    "upsampling_ratios": [8, 6, 5, 4],
    "num_hidden_layers": 1,
    "num_attention_heads": 2,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "intermediate_size": 64,
    "codebook_size": 128,
    "codebook_dim": 16,
    "vector_quantization_hidden_dimension": 16,
    "num_quantizers": 16,
    "num_semantic_quantizers": 1,
    "frame_rate": 12.5,
    "upsample_groups": 32,  # = hidden_size (real 512 = 512)
    "sampling_rate": SAMPLE_RATE,
}
#: LSUV targets: residual branch output std, final conv output std (pre-clamp).
RESIDUAL_STD: Final = 0.5
OUTPUT_STD: Final = 0.2
#: Calibration input: random codes of this many frames.
CALIBRATION_FRAMES: Final = 24


def build_codec(seed: int = 0) -> Any:
    """The tiny Qwen3TTSTokenizerV2Model, fp32 eval, calibrated, unsaved."""
    import torch

    up = import_qwen_tts()
    cfg = up.codec_configuration.Qwen3TTSTokenizerV2Config(
        encoder_config=dict(ENCODER_DIMS),
        decoder_config=dict(DECODER_DIMS),
        encoder_valid_num_quantizers=16,
        input_sample_rate=SAMPLE_RATE,
        output_sample_rate=SAMPLE_RATE,
        decode_upsample_rate=SAMPLES_PER_FRAME,
        encode_downsample_rate=SAMPLES_PER_FRAME,
    )
    with torch.random.fork_rng():  # the encoder keeps upstream's (seeded) init
        torch.manual_seed(seed)
        codec = up.codec_modeling.Qwen3TTSTokenizerV2Model(cfg).float().eval()
    perturb(codec.decoder, seed + 1)
    gen = torch.Generator().manual_seed(seed + 2)
    codes = torch.randint(
        0, DECODER_DIMS["codebook_size"], (1, 16, CALIBRATION_FRAMES), generator=gen
    )
    rescale_outputs(codec.decoder, _conv_targets(codec.decoder), codes)
    return codec


def _conv_targets(decoder: Any) -> dict[Any, float]:
    """Every decoder conv -> the std its output gets."""
    import torch

    unit_type = (
        import_qwen_tts().codec_modeling.Qwen3TTSTokenizerV2DecoderDecoderResidualUnit
    )
    residual = {u.conv2.conv for u in decoder.modules() if isinstance(u, unit_type)}
    conv_types = (torch.nn.Conv1d, torch.nn.ConvTranspose1d)
    convs = [m for m in decoder.modules() if isinstance(m, conv_types)]
    targets = {m: RESIDUAL_STD if m in residual else 1.0 for m in convs}
    targets[decoder.decoder[-1].conv] = OUTPUT_STD  # the last CausalConvNet, pre-clamp
    return targets


def write_codec(out: Path | str, seed: int = 0) -> Path:
    """Write the tiny speech_tokenizer directory ``out`` and return it."""
    from transformers import EncodecFeatureExtractor

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    build_codec(seed).save_pretrained(out, safe_serialization=True)
    # what AutoFeatureExtractor loads for upstream's Qwen3TTSTokenizer (Mimi's)
    EncodecFeatureExtractor(
        feature_size=1, sampling_rate=SAMPLE_RATE, padding_value=0.0
    ).save_pretrained(out)
    return out
