"""The ``indextts2`` engine: an IndexTTS-2 bundle loaded in hexvoice's daemon
(registered under the ``hexvoice.engines`` entry points)."""
