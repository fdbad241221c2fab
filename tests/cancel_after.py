"""A real CancelToken that fires on its n-th check, for cancel tests.

Engines and resolvers check the token before every graph call, so firing on
check n lets exactly n - 1 graph calls run: no thread timing involved.
"""

from __future__ import annotations

from daemon.sdk.cancel import CancelToken


class CancelAfter(CancelToken):
    """Fires on the n-th check (what the code under test calls before a graph)."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n, self.checks = n, 0

    def check(self) -> None:
        self.checks += 1
        if self.checks == self.n:
            self.cancel("test")
        super().check()
