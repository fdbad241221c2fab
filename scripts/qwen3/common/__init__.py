"""Pipeline parts the Qwen3 builds share (build-qwen3-asr, build-qwen3-tts),
on scripts/common/build: the options and the context every stage reads
(context), the compile group, the bundle stage, the run and the bundle cache
(stages), the bundle write (bundle), the per-graph summary rows (table), the
command line (cli); the Hugging Face directory reader's helpers (hfdir), the
decoder graphs (decoder) and the tiny checkpoints' BPE (tiny_bpe).
"""
