"""bundle_bytes: the graph keys of an ONNX dir, and the per-target table."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.bench.qnn import bundle_bytes
from tests.qnnrt.tiny_models import matmul_tanh

N = 256  # large enough that one weight copy shows in the bytes


def test_decode_bucket_files_are_named_by_their_graph_key(tmp_path: Path) -> None:
    for stem in ("t2s_prefill", "t2s_decode_L384", "vits_enc"):
        matmul_tanh(tmp_path / f"{stem}.onnx", n=8)
    found = bundle_bytes.graph_sources(tmp_path)
    assert sorted(found) == ["t2s_decode_384", "t2s_prefill", "vits_enc"]
    with pytest.raises(SystemExit, match="no ONNX for"):
        bundle_bytes.graph_sources(tmp_path, ["bert"])


def test_the_table_shows_the_board_dropping_a_weight_copy(
    tmp_path: Path, qnn_cache: Path
) -> None:
    pytest.importorskip("onnxruntime_qnn")
    for rows in (1, 8):
        matmul_tanh(tmp_path / f"enc_P{rows}.onnx", n=N, rows=rows)
    text = bundle_bytes.table(
        bundle_bytes.graph_sources(tmp_path), qnn_cache, tmp_path / "work"
    )
    rows = {line.split()[0]: line.split() for line in text.splitlines()[2:]}
    assert rows["qcs8550"][1:4] == ["2", "->", "1"]
    assert rows["simulator"][1:4] == ["2", "->", "2"]
    assert rows["simulator"][-1] == "0%" and rows["qcs8550"][-1] != "0%"
