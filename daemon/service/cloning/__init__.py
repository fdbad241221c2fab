"""Cloned voices: their files (voicefile.py) in one directory (voicestore.py),
what the service knows the store holds (stored.py), the rules a registration
must pass (clone_rules.py), what is offered of them (offers.py), and the
service's side: registration, removal, reloads (clones.py).
"""
