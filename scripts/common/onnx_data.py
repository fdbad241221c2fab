"""The files an ONNX model is made of: the graph and its external data.

A model over protobuf's 2 GB limit keeps its tensors in files beside the graph
(``location`` relative to the graph's directory; scripts/common/build/onnx_export.py
writes one ``<name>.onnx.data``).  Whoever hashes, caches or copies a graph must
take these files along, or a changed weight goes unnoticed and a copied graph
cannot load.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath


def external_files(onnx_path: str | Path) -> list[Path]:
    """The external data files ``onnx_path`` names, once each, in first-use
    order (empty for a self-contained model); ValueError for a location that
    leaves the graph's directory or is missing."""
    import onnx
    from onnx.external_data_helper import _get_all_tensors, uses_external_data

    onnx_path = Path(onnx_path)
    model = onnx.load(str(onnx_path), load_external_data=False)
    found: dict[str, Path] = {}
    for tensor in _get_all_tensors(model):
        if not uses_external_data(tensor):
            continue
        location = next(e.value for e in tensor.external_data if e.key == "location")
        rel = PurePosixPath(location)
        if rel.is_absolute() or ".." in rel.parts:
            raise ValueError(f"{onnx_path}: external data {location!r} is outside "
                             "the graph's directory")  # fmt: skip
        path = onnx_path.parent / rel
        if not path.is_file():
            raise ValueError(f"{onnx_path}: external data file {path} is missing")
        found.setdefault(location, path)
    return list(found.values())


def model_files(onnx_path: str | Path) -> list[Path]:
    """The graph followed by its external data files."""
    return [Path(onnx_path), *external_files(onnx_path)]
