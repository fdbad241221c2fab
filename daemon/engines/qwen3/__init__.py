"""The Qwen3 engines: ASR (asr/), TTS (tts/) and the decoder machinery both
use (common/)."""
