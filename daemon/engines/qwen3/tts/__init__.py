"""Qwen3-TTS 12 Hz on the NPU: the ``qwen3-tts`` engine (docs/qwen3.md, TTS).

One module per job:

    params     the bundle's params schema, file names and graph keys
    graphio    the graphs' I/O shapes (what load requires, bundle verify checks)
    options    per-request settings (language, speaker / x-vector, text mode, sampling)
    text       text cut into pieces the graphs hold, at sentence ends first
    prompt     upstream generate's prompt rows (role, codec prefix, speaker, text)
    textproj   the text_proj graph, R rows at a time
    talker     talker prefill buckets and KV-cached steps (logits + h)
    predictor  the code predictor: 16 cp_step calls per frame on a fixed KV
    sampling   talker code0 (HF processor order) and predictor code choices
    generator  frames: the one feed step for free runs and teacher forcing
    codec      codec_<T> window graphs (right-padded)
    stream     frames in, 24 kHz audio out per codec window
    xvector    the Base speaker encoder's numpy mel front end and graphs
    clone      VoicePrints of clips (Base)
    model      one loaded bundle's parts
    engine     the TtsEngine: load, voices, capabilities, synthesize, clone, warm-up
"""
