"""GPT-SoVITS v2Pro parity gates: CPU, simulator and text graphs."""
