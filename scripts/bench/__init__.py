"""Benchmarks: side-by-side tables, not timed tests.

One folder per thing measured: ``piper/``, ``gptsovits/``, ``qwen3/asr/``,
``qwen3/tts/`` (each engine), ``service/`` (``hexvoice serve`` and its peers),
``qnn/`` (the QNN runtime and binaries), ``latency_model/`` (the board latency
model: per-graph QCS8550 estimates, never measurements).
"""
