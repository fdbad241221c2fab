"""Shared autoregressive decoding: what every KV-cached decoder on the NPU needs.

One module per job; engines import what they use:

    bound       graphs whose inputs and outputs are allocated and bound once
    kv          fixed-length K/V caches in a decode graph, length buckets
    stack       a decoder's prefill graphs and KV buckets: open, timed feed
    stats       DecodeStats, the one account of a decoder's steps
    masks       additive attention masks
    processors  logits processors and warpers, composed in upstream order
    fused       the one-pass kernel for penalty + temperature + top-k
    sampler     one decode step's choice: processors, warpers, draw, history
    draws       per-request RNG, greedy and sampled (exponential race) draws
    beams       beam sampling as transformers 5 runs it, per-beam K/V reorder
    loop        the decode loop: free running and teacher forced
    rope        RoPE cos/sin tables (Qwen3 decoders)

GPT-SoVITS's T2S (engines/gptsovits/t2s.py), the Qwen3 ASR decoder and TTS
talker / code predictor (docs/qwen3.md, graph set) have the same graph shape:
x, k/v caches [..., L, dh], mask [.., L] -> logits, k/v_new. The first three
run on one ``stack.KvStack``; an engine writes its own inputs (x, cos/sin)
into the bound buffers, prefills with ``masks.causal`` (T2S:
``masks.prefix_causal``), and picks a chain: greedy ASR is
``Sampler(rng=None)``; the talker is ``hf_chain(50, 1.0, 0.9, 1.05, eos,
min_new_tokens=2, suppress=Suppress(((2048, 3072),), keep=(eos,)))``; the code
predictor the same without penalty, EOS or suppression.
"""
