"""Bundle manifests: load, verify hashes and binary I/O, refuse unsafe paths."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

import qnnrt
from daemon.bundle import (
    MANIFEST,
    Bundle,
    BundleError,
    GraphSpec,
    TensorSpec,
    pack,
    sha256_file,
    tensor_spec,
    unpack,
    write_manifest,
)


@pytest.fixture
def bundle_dir(tmp_path: Path, bins) -> Path:
    root = tmp_path / "voice"
    (root / "graphs").mkdir(parents=True)
    (root / "cpu").mkdir()
    bin_path = root / "graphs" / "matmul.bin"
    shutil.copyfile(bins["matmul_tanh"].bin_path, bin_path)
    (root / "cpu" / "table.npy").write_bytes(b"\x93NUMPY fake table bytes")
    (g,) = qnnrt.read_binary_info(bin_path).graphs
    spec = GraphSpec(
        key="matmul",
        file="graphs/matmul.bin",
        sha256=sha256_file(bin_path),
        inputs=tuple(tensor_spec(t) for t in g.inputs),
        outputs=tuple(tensor_spec(t) for t in g.outputs),
    )
    bundle = Bundle(
        root=root,
        engine="test",
        name="tiny",
        sample_rate=16000,
        languages=("en",),
        graphs={"matmul": spec},
        files={"cpu/table.npy": sha256_file(root / "cpu" / "table.npy")},
        qnn_sdk="2.51.0",
        target="simulator",
    )
    write_manifest(bundle)
    return root


def test_round_trip_and_verify_clean(bundle_dir: Path):
    b = Bundle.load(bundle_dir)
    assert b.graphs["matmul"].inputs == (TensorSpec("x", "float32", (1, 64)),)
    assert b.verify() == []


def test_flipped_byte_is_caught(bundle_dir: Path):
    p = bundle_dir / "graphs" / "matmul.bin"
    data = bytearray(p.read_bytes())
    data[len(data) // 2] ^= 0x01
    p.write_bytes(bytes(data))
    problems = Bundle.load(bundle_dir).verify()
    assert problems == [
        "graphs/matmul.bin: sha256 mismatch (file changed or corrupted)"
    ]


def test_missing_file_is_caught(bundle_dir: Path):
    (bundle_dir / "cpu" / "table.npy").unlink()
    assert Bundle.load(bundle_dir).verify() == ["cpu/table.npy: missing"]


def test_wrong_io_shape_in_manifest_is_caught(bundle_dir: Path):
    m = yaml.safe_load((bundle_dir / MANIFEST).read_text())
    m["graphs"]["matmul"]["inputs"][0]["shape"] = [1, 32]
    (bundle_dir / MANIFEST).write_text(yaml.safe_dump(m))
    (problem,) = Bundle.load(bundle_dir).verify()
    assert (
        "'x' is float32[1, 64] in the binary, float32[1, 32] in the manifest" in problem
    )


def test_renamed_output_is_caught(bundle_dir: Path):
    m = yaml.safe_load((bundle_dir / MANIFEST).read_text())
    m["graphs"]["matmul"]["outputs"][0]["name"] = "output_0"
    (bundle_dir / MANIFEST).write_text(yaml.safe_dump(m))
    problems = Bundle.load(bundle_dir).verify()
    assert any("binary has 'y', manifest does not" in p for p in problems)


@pytest.mark.parametrize("bad", ["../outside.bin", "/etc/passwd", "graphs/../../x"])
def test_paths_cannot_escape_the_bundle(bundle_dir: Path, bad: str):
    m = yaml.safe_load((bundle_dir / MANIFEST).read_text())
    m["graphs"]["matmul"]["file"] = bad
    (bundle_dir / MANIFEST).write_text(yaml.safe_dump(m))
    with pytest.raises(BundleError, match="relative path inside the bundle"):
        Bundle.load(bundle_dir)


@pytest.mark.parametrize(
    "mutate,match",
    [
        (lambda m: m.pop("engine"), "missing field 'engine'"),
        (lambda m: m.update(format=99), "format 99 is not supported"),
        (lambda m: m.update(sample_rate="fast"), "sample_rate must be an integer"),
        (lambda m: m["graphs"]["matmul"]["inputs"][0].update(shape=[0]), "positive"),
    ],
)
def test_malformed_manifest_names_the_field(bundle_dir: Path, mutate, match):
    m = yaml.safe_load((bundle_dir / MANIFEST).read_text())
    mutate(m)
    (bundle_dir / MANIFEST).write_text(yaml.safe_dump(m))
    with pytest.raises(BundleError, match=match):
        Bundle.load(bundle_dir)


def test_not_a_bundle(tmp_path: Path):
    with pytest.raises(BundleError, match="no voice.yaml"):
        Bundle.load(tmp_path)
    (tmp_path / MANIFEST).write_text("graphs: [unclosed")
    with pytest.raises(BundleError, match="invalid YAML"):
        Bundle.load(tmp_path)


def test_tar_round_trip(bundle_dir: Path, tmp_path: Path):
    tar = pack(bundle_dir, tmp_path / "voice.tar")
    out = unpack(tar, tmp_path / "unpacked")
    assert Bundle.load(out).verify() == []
