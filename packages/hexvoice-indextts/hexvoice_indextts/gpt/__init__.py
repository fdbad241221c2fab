"""The GPT's per-utterance work on the CPU around its graphs (graphs/gpt.py):
the embedding rows it reads, beam-sampled semantic codes, the latent pass."""
