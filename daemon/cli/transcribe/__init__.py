"""``hexvoice transcribe``: through the running service (command.py), or with
``--bundle`` in this process (in_process.py)."""
