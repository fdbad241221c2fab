"""QNN benchmarks: qnnrt vs onnxruntime-qnn, bundle bytes with weight sharing."""
