"""A synthetic GPT-SoVITS v2Pro voice (tiny random weights) for tests and the demo."""
