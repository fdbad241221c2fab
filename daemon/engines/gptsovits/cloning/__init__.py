"""Zero-shot voices of GPT-SoVITS v2Pro: a clip and its transcript in, a
``VoicePrint`` out (clone.py, on reference/'s features and the engine's own
frontend and T2S), and a print back as the ``Reference`` the engine speaks
with (voiceprint.py)."""
