"""Pipeline parts the Qwen3 builds share (build_asr, build_tts_qwen3).

On scripts/common/build: the options and the context every stage reads
(context), the compile group, the bundle stage and the run (stages), the
bundle write (bundle), the per-graph summary rows (table), the command line
(cli); the Hugging Face directory reader's helpers (hfdir), the decoder graphs
(decoder) and the tiny checkpoints' BPE (tiny_bpe).  Still here for the build
on scripts/common/steps.py: its work dir (workdir), step sources
(step_sources), compile steps (compiling) and bundle cache (cache).
"""
