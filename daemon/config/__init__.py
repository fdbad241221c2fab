"""Typed reading of every mapping hexvoice loads: voice.yaml params, the
service config, target profiles."""
