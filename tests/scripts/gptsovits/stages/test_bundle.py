"""`hexvoice bundle verify` on the GPT-SoVITS test bundle: clean, flipped byte,
wrong I/O shape, and the .tar."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from daemon.cli.bundle import main as bundle_cli
from daemon.sdk.bundles.manifest import MANIFEST, Bundle
from daemon.sdk.verify import verify_bundle


@pytest.fixture
def bundle_copy(built_voice: Path, tmp_path: Path) -> Path:
    root = tmp_path / "bundle"
    shutil.copytree(built_voice / "bundle", root)
    return root


def test_clean_bundle_and_tar_verify(built_voice: Path) -> None:
    assert bundle_cli(["verify", str(built_voice / "bundle")]) == 0
    assert bundle_cli(["verify", str(built_voice / "bundle.tar")]) == 0


def test_flipped_byte_in_a_graph_is_caught(
    bundle_copy: Path, capsys: pytest.CaptureFixture
) -> None:
    path = bundle_copy / "graphs" / "vits_gen.bin"
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0x10
    path.write_bytes(bytes(data))
    assert bundle_cli(["verify", str(bundle_copy)]) == 1
    out = capsys.readouterr().out
    assert "FAIL graphs/vits_gen.bin: sha256 mismatch" in out


def test_flipped_byte_in_a_cpu_table_is_caught(bundle_copy: Path) -> None:
    path = bundle_copy / "refs" / "tinyvoice.npz"
    data = bytearray(path.read_bytes())
    data[-10] ^= 0x01
    path.write_bytes(bytes(data))
    assert verify_bundle(Bundle.load(bundle_copy), binaries=False) == [
        "refs/tinyvoice.npz: sha256 mismatch (file changed or corrupted)"
    ]


def test_wrong_io_shape_is_caught(bundle_copy: Path) -> None:
    manifest = yaml.safe_load((bundle_copy / MANIFEST).read_text())
    decode = next(k for k in manifest["graphs"] if k.startswith("t2s_decode_"))
    spec = manifest["graphs"][decode]["inputs"]
    k_cache = next(t for t in spec if t["name"] == "k_cache")
    k_cache["shape"][2] += 1
    (bundle_copy / MANIFEST).write_text(yaml.safe_dump(manifest, sort_keys=False))
    problems = verify_bundle(Bundle.load(bundle_copy))
    assert len(problems) == 1
    assert f"({decode}) inputs: 'k_cache' is float16" in problems[0]
    assert "in the manifest" in problems[0]
