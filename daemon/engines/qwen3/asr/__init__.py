"""Qwen3-ASR on the NPU: the ``qwen3-asr`` engine (docs/qwen3.md, the ASR sections).

One module per job:

    params    the bundle's params schema, file names and graph I/O
    audio     upstream's normalisation, streamed (soxr, peak division)
    mel       Whisper's log-mel in numpy, frames settling as audio streams in
    encoder   the encoder graph window by window; re-encodes when the floor moves
    prompt    upstream's chat-template prompt, language hints, embeddings
    decoder   prefill buckets, KV-cached decode steps (daemon/engines/qwen3/common)
    options   per-session settings and the token chooser (greedy or sampled)
    text      streamed detokenisation (UTF-8 holdback) and upstream's parse
    model     one loaded model: utterance -> prompt -> tokens (and parity calls)
    session   the AsrSession: segments cut at pauses, partials and finals
    engine    the AsrEngine: load, capabilities, open, warm-up
"""
