"""Qwen3 benchmarks at full size: ``asr/`` and ``tts/``."""
