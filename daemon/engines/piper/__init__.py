"""Piper (VITS) voices: CPU-side parts of the piper-vits engine."""
