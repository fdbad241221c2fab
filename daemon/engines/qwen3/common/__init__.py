"""What the Qwen3 engines (``qwen3-asr``, ``qwen3-tts``) share: one decoder runtime.

Both run a Qwen3 decoder stack (the ASR text decoder, the TTS talker) as
``prefill_<P>`` buckets and ``decode_<L>`` KV buckets with the CPU's share
(RoPE tables, masks, K/V write-back; docs/qwen3.md, graph set):

    shapes   a decoder stack's sizes and buckets (params), its graphs' I/O shapes
    stack    prefill at the smallest bucket, KV buckets, one decode step's inputs
    options  the per-request ``extra`` checks both readers make
"""
