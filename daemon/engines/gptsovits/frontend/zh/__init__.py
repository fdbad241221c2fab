"""Chinese text: normalization, G2P onto the v2 symbols, tone sandhi, g2pW polyphones.

Each mirrors upstream GPT-SoVITS (commit 48b1a0169a28) for parity.
"""
