"""The ASR build's stages (export, gates, tables, bundle) and what they read."""
