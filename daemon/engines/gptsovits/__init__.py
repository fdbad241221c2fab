"""GPT-SoVITS v2Pro engine (``gpt-sovits-v2pro`` bundles)."""
