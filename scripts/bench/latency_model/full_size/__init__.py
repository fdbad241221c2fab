"""Full-size random-weight graphs of every engine, exported for the latency
model to count."""
