"""Upstream checkpoint tensors held by a port: a state dict's entries under a
prefix, and a module that keeps them as buffers (so ``.double()`` casts them
for the float64 floor and the ONNX export folds them into the graph)."""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import nn


def sub(state: Mapping[str, torch.Tensor], prefix: str) -> dict[str, torch.Tensor]:
    """The entries of ``state`` under ``prefix``, the prefix removed."""
    return {k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)}


class Weights(nn.Module):
    """A state dict as buffers, read back by their checkpoint names (``w``)."""

    def __init__(self, state: Mapping[str, torch.Tensor]) -> None:
        super().__init__()
        for key, value in state.items():
            self.register_buffer(key.replace(".", "__"), value.clone())

    def w(self, key: str) -> torch.Tensor:
        return getattr(self, key.replace(".", "__"))

    def has(self, key: str) -> bool:
        return hasattr(self, key.replace(".", "__"))
