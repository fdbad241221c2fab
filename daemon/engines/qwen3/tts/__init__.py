"""Qwen3-TTS 12 Hz on the NPU: the ``qwen3-tts`` engine (docs/qwen3.md, TTS).

One module per job:

    params     the bundle's params schema, file names and graph keys
    sizes      the parts' sizes in it: predictor, text, codec windows, x-vector
    graphio    the graphs' I/O shapes (what load requires, bundle verify checks)
    options    per-request settings (language, speaker / x-vector, text mode, sampling)
    text/      the text in: pieces the graphs hold, upstream generate's prompt
               rows, the text_proj graph
    frames/    codes out: talker buckets, the code predictor, how each code is
               chosen, the one feed step for free runs and teacher forcing
    codec/     audio out: codec_<T> window graphs, the stream of windows
    xvector    the Base speaker encoder's numpy mel front end and graphs
    clone      VoicePrints of clips (Base)
    model      one loaded bundle's parts
    engine     the TtsEngine: load, voices, capabilities, synthesize, clone, warm-up
"""
