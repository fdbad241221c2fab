"""Audio every engine shares.

Shaping at segment edges and at the output edge; overlapped vocoder windows.
"""
