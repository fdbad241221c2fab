"""Qwen3 family ports (ASR, later TTS): export, build and upstream oracles."""
