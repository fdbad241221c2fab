"""The engine SDK: what every engine is, and what engines share.

One module (or folder) per job:

    registry      the Engine protocol, the engines registered, engine_for(bundle)
    tts, asr      the task protocols (and tts.TtsEngineBase)
    base          EngineBase: the shell every engine repeats
    capabilities  what a loaded engine declares; cloning, cancel: its values
    graphs        Runners on qnnrt or onnxruntime CPU, the GraphHost
    bundles/      the manifest and what an engine needs of its graphs
    verify        the one bundle check; local: an engine loaded in-process
    license       terms an engine's user must accept before it loads
    ar/           autoregressive decoding (KV stack, sampling, loops)
    audio/        audio every engine shares (resamplers, windows, shaping)
"""
