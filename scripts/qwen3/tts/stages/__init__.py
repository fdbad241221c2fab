"""The Qwen3-TTS build's stages, one module each (build.py declares them):
windows (schedule), export, gates_cpu, tables, quant cp_step, gates_sim and
bundle; gating holds what the two gate stages share."""
