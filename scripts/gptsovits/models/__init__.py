"""GPT-SoVITS v2Pro model code.

Upstream architecture arranged for static graphs, and upstream checkpoint formats.
"""
