"""The shared models upstream fetches by Hugging Face id, found in a hub cache
(``HF_HOME/hub``, as ``huggingface_hub`` lays it out) without importing it:
``models--<org>--<name>/refs/main`` names the snapshot directory."""

from __future__ import annotations

from pathlib import Path
from typing import Final

#: the ids infer_v2 downloads (the BigVGAN id comes from config.yaml)
W2V_BERT: Final = "facebook/w2v-bert-2.0"
MASKGCT: Final = "amphion/MaskGCT"
MASKGCT_FILE: Final = "semantic_codec/model.safetensors"
CAMPPLUS: Final = "funasr/campplus"
CAMPPLUS_FILE: Final = "campplus_cn_common.bin"


class HubError(FileNotFoundError):
    """A model upstream needs is not in the hub cache; the message says which."""


def snapshot(hub: Path, repo_id: str) -> Path:
    """The snapshot directory of ``repo_id`` under the hub cache ``hub``."""
    repo = Path(hub) / f"models--{repo_id.replace('/', '--')}"
    ref = repo / "refs" / "main"
    if not ref.is_file():
        raise HubError(f"{hub}: no {repo_id} (expected {ref}); download it first")
    snap = repo / "snapshots" / ref.read_text().strip()
    if not snap.is_dir():
        raise HubError(f"{ref} names {snap.name}, which is not in {repo / 'snapshots'}")
    return snap
