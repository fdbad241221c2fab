"""GPT-SoVITS benchmarks: the engine, host time per T2S step, voice cloning."""
