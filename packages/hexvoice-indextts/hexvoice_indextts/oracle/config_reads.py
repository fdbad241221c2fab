"""Which config.yaml keys upstream reads: a context manager that makes every
config upstream loads strict (reading a key it lacks raises) and records the full key of
every node read.

Upstream reads its config with ``OmegaConf.load`` and then by attribute, by
item, with ``.get`` and by ``**`` unpacking (``UnifiedVoice(**cfg.gpt)``); each
of these reaches ``DictConfig._get_node``, which is where reads are recorded.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def recording() -> Iterator[set[str]]:
    """Within: every DictConfig node read is added to the yielded set, as its
    dotted full key ("s2mel.DiT.hidden_dim"), and OmegaConf.load returns
    struct-mode configs, so reading a missing key raises."""
    from omegaconf import DictConfig, OmegaConf

    reads: set[str] = set()
    get_node = DictConfig._get_node
    load = OmegaConf.load
    # _get_full_key walks up through _get_node itself: those are not reads
    naming = [False]

    def recording_get_node(self, key, *args, **kwargs):  # type: ignore[no-untyped-def]
        node = get_node(self, key, *args, **kwargs)
        if node is not None and not naming[0]:
            naming[0] = True
            try:
                reads.add(self._get_full_key(key))
            finally:
                naming[0] = False
        return node

    def strict_load(*args, **kwargs):  # type: ignore[no-untyped-def]
        cfg = load(*args, **kwargs)
        OmegaConf.set_struct(cfg, True)
        return cfg

    DictConfig._get_node = recording_get_node  # type: ignore[method-assign]
    OmegaConf.load = strict_load  # type: ignore[method-assign]
    try:
        yield reads
    finally:
        DictConfig._get_node = get_node  # type: ignore[method-assign]
        OmegaConf.load = load  # type: ignore[method-assign]
