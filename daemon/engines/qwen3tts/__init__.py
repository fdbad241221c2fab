"""Qwen3-TTS 12 Hz on the NPU: the ``qwen3-tts`` engine (shared/docs/qwen3.md §2).

One module per job:

    params    the bundle's params schema, file names and graph keys
    graphio   the graphs' I/O shapes (what load requires, bundle verify checks)
"""
