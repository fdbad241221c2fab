"""Codec frames from a prompt: the talker, the code predictor, their choices.

talker     talker prefill buckets and KV-cached steps (logits + h)
predictor  the code predictor: 16 cp_step calls per frame on a fixed KV
sampling   talker code0 (HF processor order) and predictor code choices
generator  frames: the one feed step for free runs and teacher forcing
"""
