"""Pipeline parts the Qwen3 builds share (build_asr, build_tts_qwen3): the
Hugging Face directory reader's helpers, the content-keyed bundle cache and
the summary table's layout."""
