"""scripts/eval-gptsovits: score every SoVITS epoch of a training folder
(eval_voice.py)."""
