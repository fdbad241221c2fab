"""Pipeline parts the Qwen3 builds share (build_asr, build_tts_qwen3): the
Hugging Face directory reader's helpers (hfdir), the command line's checks and
flags (cli), the work-dir layout (workdir), the step sources' hashes
(step_sources), the compile steps (compiling), the bundle step (bundle), the
content-keyed bundle cache (cache) and the summary table's layout (table)."""
