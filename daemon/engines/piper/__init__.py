"""Piper (VITS) voices on the NPU: the `piper-vits` engine and its CPU parts."""
