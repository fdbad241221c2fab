"""Board latency model (board latency, predicted off the board): ONNX cost
counting, the roofline fit to the reference port's QCS8550 timings, full-size
random-weight exports (``full_size/``) and each engine's call schedule.
``python -m scripts.bench.latency_model`` prints the report; other benchmarks
call ``estimate.estimate``."""
