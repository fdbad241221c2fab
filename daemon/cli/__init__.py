"""The ``hexvoice`` command and its subcommands.

Each subcommand puts the other packages together; nothing below imports from here.
"""
