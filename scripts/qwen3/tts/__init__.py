"""Qwen3-TTS 12 Hz: tiny checkpoints, the upstream oracle, export and bundle build."""
