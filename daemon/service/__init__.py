"""The running service.

Configuration, the engine host and its jobs, voices, limits, metrics, systemd.
"""
