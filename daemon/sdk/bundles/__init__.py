"""Voice bundles: the manifest (read and written) and the one check behind verify.
"""
