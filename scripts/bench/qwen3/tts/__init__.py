"""Qwen3-TTS at full size: host time per frame, first audio, bundle bytes, w8a16."""
