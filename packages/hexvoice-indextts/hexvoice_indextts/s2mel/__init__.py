"""s2mel's per-utterance work on the CPU around its graphs: the flow
matching's Euler steps (the DiT velocity is a graph, graphs/dit.py)."""
