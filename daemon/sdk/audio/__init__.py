"""Audio every engine shares.

Shaping at segment edges and at the output edge (``shaping.py``); overlapped
vocoder windows (``windows.py``); where to cut long speech (``silence.py``);
the one resampler (``resample.py``: soxr HQ as librosa, torchaudio's sinc as
``sinc.py`` ports it, one-shot or streamed); the front ends' STFT and mel
filter banks (``stft.py``, ``mel.py``).
"""
