"""Qwen3-ASR on the NPU: the ``qwen3-asr`` engine (shared/docs/qwen3.md §1)."""
