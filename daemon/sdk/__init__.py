"""The engine SDK.

Task protocols, the registry, graphs, bundles, audio and windowing shared by every
engine.
"""
