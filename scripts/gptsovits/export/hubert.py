"""Export the prompt-token graphs ``hubert`` and ``ssl_quant`` (static fp32 ONNX).

hubert      audio [1, S], conv_mask [1, 1, T0], frame_mask [1, 1, T]
            -> hidden [1, ssl, T]       (scripts/gptsovits/models/hubert.py)
ssl_quant   ssl [1, ssl, T] -> proj [1, ssl, T // 2]      (codes=False, default)
                            or codes [1, T // 2] int32     (codes=True)

S = ReferenceShapes.hubert_samples; T0 and T are the first and last conv's frames
of S samples. By default ssl_quant stops at ssl_proj and the nearest codebook
entry is found on the CPU in fp32 (daemon/engines/gptsovits/reference/prompt.py);
``codes=True`` puts the argmax in the graph. Measured on the simulator (tiny
HuBERT, a codebook on real ssl_proj frames, 3.5/6/9.5 s clips), tokens equal to
upstream's: CPU argmin 99/88/97 %, in-graph fp16 argmax 91/48/92 %.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from daemon.engines.gptsovits.reference import prompt
from scripts.common.build.onnx_export import GraphSpec, export_static
from scripts.gptsovits.models.hubert import MaskedHubert, SslQuant, conv_lengths
from scripts.gptsovits.shapes import EXTERNAL_DATA, ReferenceShapes

if TYPE_CHECKING:
    from transformers import HubertModel

    from scripts.gptsovits.models.sovits import SovitsModel

HUBERT_ONNX = "hubert.onnx"
SSL_QUANT_ONNX = "ssl_quant.onnx"


def hubert_frames(hubert: HubertModel, samples: int) -> tuple[int, int]:
    """(first conv frames T0, output frames T) of a ``samples`` window."""
    lengths = conv_lengths(hubert.config, samples)
    return lengths[0], lengths[-1]


def load_hubert(path: Path) -> HubertModel:
    """chinese-hubert-base (or the tiny copy) as upstream loads it
    (CNHubert: HubertModel.from_pretrained(base_path, local_files_only=True))."""
    from transformers import HubertModel

    if not (Path(path) / "config.json").is_file():
        raise FileNotFoundError(
            f"--hubert {path}: not a HuBERT directory (no config.json); "
            "expected GPT_SoVITS/pretrained_models/chinese-hubert-base"
        )
    return HubertModel.from_pretrained(str(path), local_files_only=True).eval()


def export_hubert(
    hubert: HubertModel,
    sovits: SovitsModel,
    shapes: ReferenceShapes,
    out_dir: Path,
    codes: bool = False,
) -> list[GraphSpec]:
    """hubert.onnx and ssl_quant.onnx in ``out_dir``."""
    width = hubert.config.hidden_size
    if sovits.dims.ssl != width:
        raise ValueError(
            f"HuBERT hidden width {width} != the SoVITS model's ssl width "
            f"{sovits.dims.ssl} (is --hubert the voice's chinese-hubert-base?)"
        )
    s = shapes.hubert_samples
    if conv_lengths(hubert.config, s) != prompt.conv_lengths(s):
        raise ValueError(
            "HuBERT conv kernels/strides differ from chinese-hubert-base's, "
            "which the runtime (reference/prompt.py) assumes"
        )
    t0, t = hubert_frames(hubert, s)
    with warnings.catch_warnings():
        # BlockConv reads the static window's sizes as Python ints, on purpose.
        warnings.filterwarnings("ignore", message="Converting a tensor to a Python")
        return _export_both(hubert, sovits, s, t0, t, out_dir, codes)


def _export_both(
    hubert: HubertModel,
    sovits: SovitsModel,
    s: int,
    t0: int,
    t: int,
    out_dir: Path,
    codes: bool,
) -> list[GraphSpec]:
    width = hubert.config.hidden_size
    return [
        export_static(
            MaskedHubert(hubert),
            (torch.zeros(1, s), torch.ones(1, 1, t0), torch.ones(1, 1, t)),
            ["audio", "conv_mask", "frame_mask"],
            ["hidden"],
            out_dir / HUBERT_ONNX,
            EXTERNAL_DATA,
            # onnxruntime's full optimisation of the BASIC-folded graph fails
            # ("Attempt to replace the existing tensor"), as for bert.
            fold=False,
        ),
        export_static(
            SslQuant(sovits, codes),
            (torch.zeros(1, width, t),),
            ["ssl"],
            ["codes" if codes else "proj"],
            out_dir / SSL_QUANT_ONNX,
            EXTERNAL_DATA,
        ),
    ]
