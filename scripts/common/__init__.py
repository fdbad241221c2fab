"""Build-time pieces every voice pipeline shares.

The HTP compile step, bundling, parity metrics.
"""
