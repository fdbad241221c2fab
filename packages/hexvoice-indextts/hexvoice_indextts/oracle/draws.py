"""torch's global random stream as the port's ``Draws`` (segment.py), in the
calls upstream makes of it: the beam search's ``multinomial`` (Exp(1) draws),
then the flow matching's ``randn``.  Seeded as upstream's run is, it gives the
port upstream's own random numbers (tests and parity runs only)."""

from __future__ import annotations

import numpy as np


class TorchDraws:
    def exponential(self, n: int) -> np.ndarray:
        import torch

        return torch.empty(1, n).exponential_(1).numpy()[0]

    def normal(self, shape: tuple[int, ...]) -> np.ndarray:
        import torch

        return torch.randn([1, *shape]).numpy()[0]
