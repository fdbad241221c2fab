"""Board latency model (board latency, predicted off the board): ONNX cost
counting, the roofline fit to the reference port's QCS8550 timings, full-size
random-weight exports and each engine's call schedule.  Entry point:
scripts/bench/board_model.py."""
