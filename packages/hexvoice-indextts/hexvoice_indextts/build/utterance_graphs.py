"""Every per-utterance graph of a model directory, exported into one folder
(the build's export stage, and the tests' CPU port): the GPT's prefill,
decode and latent graphs, s2mel's length regulator and DiT, BigVGAN's
windows, one per bucket of ``UtteranceBuckets``, each named as the runtime
looks it up (``gpt_prefill_P64``, ``dit_F96``, ...).  ``utterance_tables``
reads the CPU side's tables from the same checkpoints (tables.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from scripts.common.build.onnx_export import GraphSpec

from hexvoice_indextts.build.bigvgan_graph import (
    bigvgan_config,
    export_bigvgan,
    load_bigvgan,
)
from hexvoice_indextts.build.dit_graph import export_dit, load_dit
from hexvoice_indextts.build.gpt_graph import (
    export_decode,
    export_latent,
    export_prefill,
    load_ports,
    shape_of,
)
from hexvoice_indextts.build.length_regulator_graph import (
    export_length_regulator,
    load_length_regulator,
    s2mel_modules,
)
from hexvoice_indextts.layout import UtteranceBuckets
from hexvoice_indextts.model_dir import ModelDir
from hexvoice_indextts.model_dir.hub import MASKGCT, MASKGCT_FILE, snapshot
from hexvoice_indextts.tables import UtteranceTables


def vocoder_snapshot(md: ModelDir, hub: Path) -> Path:
    return snapshot(hub, md.config.vocoder.name)


def codec_file(hub: Path) -> Path:
    return snapshot(hub, MASKGCT) / MASKGCT_FILE


def export_utterance(
    md: ModelDir, hub: Path, b: UtteranceBuckets, out: Path
) -> dict[str, GraphSpec]:
    """Every graph, by its runtime name, as ONNX under ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    return {spec.name: spec for spec in _exports(md, hub, b, out)}


def _exports(
    md: ModelDir, hub: Path, b: UtteranceBuckets, out: Path
) -> Iterator[GraphSpec]:
    cfg = md.config
    gpt_layer = s2mel_modules(md.s2mel)["gpt_layer"]
    ports = load_ports(md.gpt, cfg.gpt, gpt_layer)
    shape = shape_of(cfg.gpt, b.beams)
    each: list[tuple[tuple[int, ...], Callable[[int], GraphSpec]]] = [
        (b.prefill, lambda n: export_prefill(ports["prefill"], shape, n, out)),
        (b.decode, lambda n: export_decode(ports["decode"], shape, n, out)),
        (b.latent, lambda n: export_latent(ports["latent"], shape, n, out)),
    ]
    regulator = load_length_regulator(md.s2mel, cfg.s2mel.length_regulator)
    vocoder = vocoder_snapshot(md, hub)
    each += [
        (b.regulator, lambda n: export_length_regulator(regulator, n, out)),
        (b.dit, lambda n: export_dit(load_dit(md.s2mel, cfg.s2mel, n), cfg.s2mel, out)),
        (b.vocoder, lambda n: export_bigvgan(load_bigvgan(vocoder, n), out)),
    ]
    for sizes, export in each:
        for n in sizes:
            yield export(n)


def utterance_tables(md: ModelDir, hub: Path, b: UtteranceBuckets) -> UtteranceTables:
    """The CPU tables the runtime reads (torch and the checkpoints: build side)."""
    from safetensors.torch import load_file

    from hexvoice_indextts.gpt.prompt import GptTables
    from hexvoice_indextts.graphs.gpt_conditioning import gpt_state
    from hexvoice_indextts.graphs.semantic_codec import codebook_tables
    from hexvoice_indextts.vocoder.windows import Vocoder, config_radius

    cfg = md.config
    dit = load_dit(md.s2mel, cfg.s2mel, min(b.dit))
    h = bigvgan_config(vocoder_snapshot(md, hub))
    radius = config_radius(h)
    Vocoder.from_config({}, h, b.overlap, radius)  # refuses a short overlap here
    return UtteranceTables(
        gpt=GptTables.from_state(gpt_state(md.gpt), cfg.gpt),
        codebook=codebook_tables(load_file(codec_file(hub))),
        dit_freqs=dit.p.w("t_embedder.freqs").numpy(),
        reflect_pad=int(dit.max_pad),
        vocoder=h,
        overlap=b.overlap,
        beams=b.beams,
        layers=cfg.gpt.layers,
        heads=cfg.gpt.heads,
        vocoder_radius=radius,
    )
