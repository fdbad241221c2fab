"""build_tts_qwen3's parts: the model and codec directories, the steps, the
codec windows, the gates' inputs, the bundle and the report."""
