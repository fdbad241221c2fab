"""Graph keys of bucketed families, as builds write and engines look them up."""

from __future__ import annotations

from daemon.engines.gptsovits.layout import t2s_decode_key
from daemon.engines.piper.params import dec_key, enc_key, flow_key
from daemon.engines.qwen3.asr.params import decode_key, prefill_key
from daemon.engines.qwen3.tts.params import codec_key, speaker_key
from daemon.sdk.bundles.keys import BucketKey


def test_a_key_is_its_stem_and_the_bucket_size():
    assert BucketKey("enc_P")(64) == "enc_P64"
    assert BucketKey("decode_").stem == "decode_"


def test_the_engines_keys_keep_the_names_bundles_carry():
    # the keys already written into voice.yaml files: a rename would strand them
    got = [k(8) for k in (enc_key, flow_key, dec_key, prefill_key, decode_key,
                          codec_key, speaker_key, t2s_decode_key)]  # fmt: skip
    assert got == ["enc_P8", "flow_F8", "dec_W8", "prefill_8", "decode_8",
                   "codec_8", "speaker_8", "t2s_decode_8"]  # fmt: skip
