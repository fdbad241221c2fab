"""Qwen3-ASR: tiny checkpoints, the upstream oracle, export and bundle build."""
