"""Piper (VITS) voice conversion: ONNX surgery into static NPU graphs + CPU parts."""
