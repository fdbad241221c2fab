"""The ``hexvoice`` command and its subcommands (main.py maps each to its module).

A command of one module is named for it (bundle.py, voice.py, voices.py); a
command of several is a folder (serve/, say/, transcribe/) whose command.py is
its ``main``.  The clients of the running service are shared: Wyoming
(wyoming_client.py) and HTTP (http_client.py).  Each subcommand puts the other
packages together; nothing below imports from here.
"""
