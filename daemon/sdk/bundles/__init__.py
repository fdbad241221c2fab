"""Voice bundles: the manifest (read and written) and what an engine needs of it."""
