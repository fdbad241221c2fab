"""The port's static graphs: upstream's modules re-stated for a fixed bucket
with masks, loaded from upstream's own checkpoints (docs/upstream.md)."""
