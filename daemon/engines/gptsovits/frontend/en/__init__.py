"""English text: normalization, number words and CMU-dictionary G2P, as upstream."""
