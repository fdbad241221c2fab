"""Export Qwen3-TTS 12 Hz's static graphs from upstream's modules: the one API
the build calls (graph keys: daemon/engines/qwen3/tts/params.py; shapes the
engine binds: daemon/engines/qwen3/tts/graphio.py).

`model` is upstream's `Qwen3TTSForConditionalGeneration` (fp32, eval; its
`.talker` works too except for the speaker encoder), `codec` the 12 Hz
`Qwen3TTSTokenizerV2Model` (or its `.decoder`).

    text_proj           x [R,Dt] → y [R,Ht]
    talker_prefill_<P>  x [1,P,Ht], mask [1,1,P,P], cos/sin [1,P,hd], last [1,P]
                        → logits [1,V], h [1,Ht], k/v [Ly,Kh,P,hd]
    talker_decode_<L>   x [1,1,Ht], k_cache/v_cache [Ly,Kh,L,hd], mask [1,1,1,L],
                        cos/sin [1,1,hd] → logits [1,V], h [1,Ht], k_new/v_new
    cp_step             x [1,1,Ht], k_cache/v_cache [Lc,Khc,16,hdc], mask
                        [1,1,1,16], cos/sin [1,1,hdc], head int32 [1]
                        → logits [1,Vc], k_new/v_new [Lc,Khc,1,hdc]
    codec_<T>           codes int32 [1,16,T] → wav [1,1,1920·T]
    speaker_<F>         mel [1,F,128] → xvec [1,D]        (Base only)

All float32 except K/V with `kv_dtype=torch.float16` (the NPU binaries' caches,
as Qwen3-ASR's); every file passes `no_pow2` (export_static checks it).
"""

from __future__ import annotations

from scripts.qwen3.tts.graphs.codec import export_codec, samples_per_frame
from scripts.qwen3.tts.graphs.predictor import export_cp_step, groups, predictor_rope
from scripts.qwen3.tts.graphs.speaker import export_speaker
from scripts.qwen3.tts.graphs.talker import (
    Rope,
    export_talker_decode,
    export_talker_prefill,
    export_text_proj,
    talker_rope,
)

__all__ = [
    "Rope",
    "export_codec",
    "export_cp_step",
    "export_speaker",
    "export_talker_decode",
    "export_talker_prefill",
    "export_text_proj",
    "groups",
    "predictor_rope",
    "samples_per_frame",
    "talker_rope",
]
