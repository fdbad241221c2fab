"""Shared autoregressive decoding: what every KV-cached decoder on the NPU needs.

One module per job; engines import what they use:

    bound       graphs whose inputs and outputs are allocated and bound once
    kv          fixed-length K/V caches in a decode graph, length buckets
    masks       additive attention masks
    processors  logits processors and warpers, composed in upstream order
    fused       the one-pass kernel for penalty + temperature + top-k
    sampler     one decode step's choice: processors, warpers, draw, history
    draws       per-request RNG, greedy and sampled (exponential race) draws
    loop        the decode loop: free running and teacher forced

GPT-SoVITS's T2S (engines/gptsovits/t2s.py) is the first user; the Qwen3 ASR
decoder and TTS talker / code predictor (shared/docs/qwen3.md §4) have the same
graph shape: x, k/v caches [..., L, dh], mask [.., L] -> logits, k/v_new.
"""
