"""What a command says when it cannot do what it was asked."""

from __future__ import annotations


class CommandError(RuntimeError):
    """The service could not be reached or refused, or the bundle run in this
    process could not do it; the message says why (the command prints it after
    its name and exits 1)."""
