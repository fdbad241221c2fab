"""The voices the service serves: what a voice is and which one answers a
request (voice.py), one bundle read, verified and loaded (bundles.py), the set
of loaded engines (voiceset.py), and loading, reloading and evicting them
engine by engine (reload.py).
"""
