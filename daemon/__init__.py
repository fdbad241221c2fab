"""hexvoice daemon: TTS engines, voice bundles and the systemd service."""
