"""Audio every engine shares.

Shaping at segment edges and at the output edge; overlapped vocoder windows;
whole clips at another rate as librosa (``resample.py``) or torchaudio
(``sinc.py``) makes them.
"""
