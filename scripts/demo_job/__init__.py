"""The main job on the built-in demo voice: make the voice, serve it, speak, stop."""
