"""GPT-SoVITS v2Pro build pipeline.

Resumable ``build_voice`` steps, from a training folder to a verified bundle.
"""
