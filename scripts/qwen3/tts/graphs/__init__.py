"""Qwen3-TTS's static graphs: the torch wrappers of upstream's modules (talker,
code predictor, codec decoder, speaker encoder), their ONNX export (export.py),
the CPU gates against upstream (gates.py) and the predictor layout measurement
(cp_measure.py)."""
