"""scripts/eval_voice: score every SoVITS epoch of a training folder (eval_voice.py)."""
