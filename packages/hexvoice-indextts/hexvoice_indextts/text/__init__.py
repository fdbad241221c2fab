"""The text front end, as upstream's ``TextTokenizer`` with its ``TextNormalizer``
runs it: normalisation (normalize.py), the SentencePiece pieces (tokens.py) and
the segments the GPT speaks one at a time (segments.py)."""
