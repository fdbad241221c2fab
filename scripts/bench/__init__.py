"""Benchmarks: side-by-side tables, not timed tests."""
