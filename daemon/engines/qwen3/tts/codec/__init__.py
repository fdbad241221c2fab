"""Codec frames to 24 kHz audio.

decoder  the codec_<T> window graphs (right-padded)
stream   frames in, audio out per codec window (the schedules)
"""
