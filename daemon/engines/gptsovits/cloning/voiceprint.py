"""A zero-shot voice's ``VoicePrint`` as this engine lays it out, and its way
back to the ``Reference`` the engine speaks with.

Arrays (the keys of a bundle's ``refs/<voice>.npz``, layout.py): ``phones``
int32 [n], ``bert`` float32 [n, bert_dim], ``prompt`` int32 [m], ``ge`` float32
[1, gin, 1], ``ge512`` float32 [1, mrte, 1]; meta: ``text`` (the prompt text),
``lang``, ``prompt_semantic`` ("hubert": tokens from the graphs), ``seconds``,
``aux`` (how many aux clips were averaged in).

A print is valid for one set of reference graphs: ``model`` is a sha256 over
the four graphs' manifest sha256s (``ref_enc`` and ``ssl_quant`` carry the
SoVITS checkpoint's sv projection and codebook), so a rebuilt bundle never
speaks with prints of another SoVITS/HuBERT/ERes2NetV2.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from daemon.engines.gptsovits import layout as L
from daemon.engines.gptsovits.tables import Reference
from daemon.sdk.bundles.manifest import BundleError

if TYPE_CHECKING:
    from daemon.engines.gptsovits.layout import GsvParams
    from daemon.sdk.cloning import VoicePrint

#: meta["prompt_semantic"] of a clone: its tokens came from the hubert graph
PROMPT_SOURCE: Final = L.PROMPT_HUBERT
#: what a reference made from a print is called in errors and logs
CLONED: Final = "cloned voice"


def has_reference_graphs(graphs: Mapping[str, Any]) -> bool:
    return all(key in graphs for key in L.REFERENCE_GRAPHS)


def reference_model_id(specs: Mapping[str, Any]) -> str:
    """sha256 over the four reference graphs' (key, sha256) in the manifest
    (``Bundle.graphs``: GraphSpec per key)."""
    h = hashlib.sha256(L.ENGINE_ID.encode())
    for key in L.REFERENCE_GRAPHS:
        h.update(f"|{key}={specs[key].sha256}".encode())
    return h.hexdigest()


def reference_of(vp: VoicePrint, p: GsvParams, model_id: str | None) -> Reference:
    """The ``Reference`` a cloned voice speaks with; ValueError when the print
    is not this bundle's (the service checked that; a direct caller may not)."""
    if vp.engine_id != L.ENGINE_ID:
        raise ValueError(f"{L.ENGINE_ID}: a print of engine {vp.engine_id!r}")
    if model_id is None or vp.model != model_id:
        raise ValueError(
            f"{L.ENGINE_ID}: the cloned voice was made with reference graphs "
            f"{vp.model[:12]}, this bundle's are {(model_id or 'none')[:12]} "
            "(add the voice again)"
        )
    try:
        return Reference.from_arrays({**vp.arrays, **vp.meta}, p, CLONED, CLONED)
    except BundleError as exc:
        raise ValueError(f"{L.ENGINE_ID}: {exc}") from None
