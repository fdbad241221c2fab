"""Requests on the one NPU worker: admitted to one bounded queue and taken in
turns (scheduler.py), as jobs of either task (jobs.py); a TTS job a segment
at a time (rounds.py), an ASR session a step at a time (sessions.py), holding
its engine's turn (turns.py).
"""
