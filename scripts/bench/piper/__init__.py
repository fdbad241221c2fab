"""Piper benchmarks: the engine vs piper-tts, host time per decoder window,
the decoder windows before -> after."""
