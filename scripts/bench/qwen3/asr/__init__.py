"""Qwen3-ASR at full size: host time per decode step, the mel front end,
bundle bytes."""
