"""The shared models IndexTTS-2 fetches from the Hugging Face hub by id, tiny and
random, in the hub's local cache layout (``<hub>/models--org--name/refs/main``
naming a snapshot directory that holds the files), so that upstream's own
``from_pretrained`` / ``hf_hub_download`` calls find them with HF_HUB_OFFLINE=1.

Which ids and files, and where upstream asks for them (indextts/infer_v2.py):
w2v-BERT 2.0 (SeamlessM4TFeatureExtractor and, in utils/maskgct_utils.py,
Wav2Vec2BertModel), MaskGCT's semantic codec weights, CAM++ and BigVGAN v2.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Final

from hexvoice_indextts.model_dir.hub import CAMPPLUS as CAMPPLUS_ID
from hexvoice_indextts.model_dir.hub import CAMPPLUS_FILE, MASKGCT_FILE
from hexvoice_indextts.model_dir.hub import MASKGCT as MASKGCT_ID
from hexvoice_indextts.model_dir.hub import W2V_BERT as W2V_ID

BIGVGAN_ID: Final = "nvidia/bigvgan_v2_22khz_80band_256x"

#: w2v-BERT: upstream reads hidden_states[17] (infer_v2.get_emb), so 17 layers
#: is the fewest that has it; width 1024 and 16 heads are the real model's (the
#: width is hard-coded downstream). Only the feed-forward is shrunk (real 4096).
W2V_LAYERS: Final = 17
W2V_FFN: Final = 37
#: The real w2v-bert-2.0 preprocessor_config.json (padding_value 1 matters: the
#: extractor pads the frame count to a multiple of its stride).
W2V_PREPROCESSOR: Final = {
    "feature_extractor_type": "SeamlessM4TFeatureExtractor",
    "feature_size": 80,
    "num_mel_bins": 80,
    "padding_side": "right",
    "padding_value": 1,
    "processor_class": "Wav2Vec2BertProcessor",
    "return_attention_mask": True,
    "sampling_rate": 16000,
    "stride": 2,
}
#: BigVGAN: the real 22 kHz 80-band hop-256 generator's hyper-parameters (the
#: config.json upstream bundles beside bigvgan.py) with three upsampling stages
#: of the same product 256 and odd channel counts 28 -> 14 -> 7 -> 3.
BIGVGAN_OVERRIDES: Final = {
    "upsample_rates": [8, 8, 4],
    "upsample_kernel_sizes": [16, 16, 8],
    "upsample_initial_channel": 28,
    "resblock_kernel_sizes": [3, 7],
    "resblock_dilation_sizes": [[1, 3, 5], [1, 3, 5]],
}


def write_hub(hub: Path, cfg: Any, seed: int) -> None:
    """All four repositories under the hub cache ``hub`` (HF_HOME/hub)."""
    _write_w2v(_snapshot(hub, W2V_ID), seed)
    _write_maskgct(_snapshot(hub, MASKGCT_ID), cfg, seed + 1)
    _write_campplus(_snapshot(hub, CAMPPLUS_ID), seed + 2)
    _write_bigvgan(_snapshot(hub, BIGVGAN_ID), seed + 3)


def _snapshot(hub: Path, repo_id: str) -> Path:
    """The snapshot directory of ``repo_id``; refs/main names it. The revision
    is a fixed digest of the id: the cache only needs it to be 40 hex digits."""
    repo = hub / f"models--{repo_id.replace('/', '--')}"
    revision = hashlib.sha1(f"hexvoice-tiny:{repo_id}".encode()).hexdigest()
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(revision)
    snap = repo / "snapshots" / revision
    snap.mkdir(parents=True, exist_ok=True)
    return snap


def _write_w2v(snap: Path, seed: int) -> None:
    import torch
    from transformers import Wav2Vec2BertConfig, Wav2Vec2BertModel

    torch.manual_seed(seed)
    config = Wav2Vec2BertConfig(num_hidden_layers=W2V_LAYERS, intermediate_size=W2V_FFN)
    # fp32 on disk: transformers 5 loads a checkpoint in its stored dtype
    Wav2Vec2BertModel(config).eval().save_pretrained(snap)
    (snap / "preprocessor_config.json").write_text(
        json.dumps(W2V_PREPROCESSOR, indent=2)
    )


def _write_maskgct(snap: Path, cfg: Any, seed: int) -> None:
    """The semantic codec (RepCodec of config.yaml's semantic_codec), saved as
    safetensors.torch.save_model writes it (infer_v2 reads it with load_model)."""
    import safetensors.torch
    import torch
    from indextts.utils.maskgct_utils import build_semantic_codec

    torch.manual_seed(seed)
    codec = build_semantic_codec(cfg.semantic_codec)
    path = snap / MASKGCT_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    safetensors.torch.save_model(codec, str(path))


def _write_campplus(snap: Path, seed: int) -> None:
    """CAM++ as infer_v2 builds it (feat_dim 80, embedding 192; the rest of its
    widths are the class defaults, so the real ones), a torch.save'd state dict."""
    import torch
    from indextts.s2mel.modules.campplus.DTDNN import CAMPPlus

    torch.manual_seed(seed)
    model = CAMPPlus(feat_dim=80, embedding_size=192)
    torch.save(model.state_dict(), snap / CAMPPLUS_FILE)


def _write_bigvgan(snap: Path, seed: int) -> None:
    """BigVGAN saved by its own _save_pretrained (config.json and
    bigvgan_generator.pt holding {"generator": state dict with weight norm})."""
    import torch
    from indextts.s2mel.modules.bigvgan import bigvgan

    bundled = Path(bigvgan.__file__).with_name("config.json")
    h = bigvgan.AttrDict({**json.loads(bundled.read_text()), **BIGVGAN_OVERRIDES})
    torch.manual_seed(seed)
    # upstream's own init is kept: on the tiny model it gives output of about
    # 0.1 of full scale, far from both silence and clipping (tanh at the end)
    model = bigvgan.BigVGAN(h, use_cuda_kernel=False)
    model._save_pretrained(snap)
