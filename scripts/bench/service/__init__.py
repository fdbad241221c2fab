"""``hexvoice serve`` benchmarks: protocols vs in-process, fairness, wyoming-piper."""
