"""Binary metadata (QnnSystemContext) and ``python -m qnnrt info``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

import qnnrt

ROOT = Path(__file__).resolve().parents[2]


def test_metadata_before_any_context(bins):
    info = qnnrt.read_binary_info(bins["multi_io"].bin_path)
    assert info.info_version == 3 and info.backend_id == 6
    assert info.soc_model == 43 and info.dsp_arch == 73
    assert info.build_id.startswith("v2.51")
    (g,) = info.graphs
    assert [(t.name, t.dtype_name, t.shape) for t in g.inputs] == [
        ("c", "FLOAT_16", (2, 8)),
        ("ids", "INT_32", (1, 4)),
        ("a", "FLOAT_32", (3, 5)),
    ]
    assert [t.native_dtype for t in g.outputs] == [np.float32, np.float16, np.float32]
    assert len({t.id for t in g.inputs + g.outputs}) == 6
    assert g.vtcm_bytes > 0 and g.io_bytes and g.const_bytes
    assert info.spill_fill_bytes == 0


def test_quantized_metadata(bins):
    (g,) = qnnrt.read_binary_info(bins["qdq8"].bin_path).graphs
    (x,) = g.inputs
    assert x.dtype_name == "UFIXED_POINT_8" and x.encoding == "SCALE_OFFSET"
    assert x.quantization.offset == -128
    assert abs(x.quantization.scale - 0.05) < 1e-7


def _info(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "qnnrt", "info", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def test_info_cli_text_and_json(bins):
    path = str(bins["qdq8"].bin_path)
    text = _info(path)
    assert text.returncode == 0, text.stderr
    assert "UFIXED_POINT_8" in text.stdout and "offset=-128" in text.stdout
    assert "dsp_arch v73" in text.stdout
    js = _info(path, "--json")
    data = json.loads(js.stdout)  # stdout is pure JSON (no QNN banner)
    assert data["graphs"][0]["inputs"][0]["offset"] == -128
    assert data["soc_model"] == 43


def test_info_cli_bad_file_is_an_error_not_a_crash(bins, tmp_path):
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"\x08\x07" * 500)
    res = _info(str(bad), str(bins["qdq8"].bin_path))
    assert res.returncode == 1
    assert "MALFORMED_BINARY" in res.stderr and str(bad) in res.stderr
    assert "UFIXED_POINT_8" in res.stdout  # the good file is still reported
