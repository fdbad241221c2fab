"""Board detection and the board run's prebuilt binaries (tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import _MODELS, BOARD_BUNDLE_ENV, board_binaries, on_board


@pytest.mark.parametrize(
    "nodes,machine,expected",
    [
        (["adsprpc-smd"], "aarch64", True),
        (["fastrpc-cdsp"], "aarch64", True),  # upstream fastrpc / Debian images
        (["fastrpc-cdsp-secure", "fastrpc-adsp"], "aarch64", True),
        ([], "aarch64", False),
        (["fastrpc-cdsp"], "x86_64", False),
        (["null"], "aarch64", False),
    ],
)
def test_board_marker_detects_either_fastrpc_node(tmp_path, nodes, machine, expected):
    for name in nodes:
        (tmp_path / name).touch()
    assert on_board(tmp_path, machine) is expected


def test_board_binaries_come_from_the_bundle_variable(tmp_path):
    for name in _MODELS:
        (tmp_path / f"{name}.bin").write_bytes(b"prebuilt")
    got = board_binaries({BOARD_BUNDLE_ENV: str(tmp_path)})
    assert got == {name: tmp_path / f"{name}.bin" for name in _MODELS}


def test_a_board_run_without_binaries_says_how_to_make_them(tmp_path):
    with pytest.raises(LookupError, match="python -m tests.qnnrt.board_bundle DIR"):
        board_binaries({})
    (tmp_path / "matmul_tanh.bin").write_bytes(b"prebuilt")
    with pytest.raises(LookupError, match=r"missing .*kv_decode\.bin"):
        board_binaries({BOARD_BUNDLE_ENV: str(tmp_path)})


def test_board_bundle_builds_every_binary_a_board_test_needs(tmp_path: Path):
    from tests.qnnrt.board_bundle import build
    from tests.qnnrt.test_shared import (
        BUCKET_BIN,
        BUCKET_ROWS,
        SAME_WEIGHTS_BIN,
        SHARED_BUCKETS_BIN,
    )

    built = build(tmp_path)
    assert built == {
        **board_binaries({BOARD_BUNDLE_ENV: str(tmp_path)}),
        # the weight-shared binaries only a board loads (test_shared.py), and
        # each bucket alone for the bit-identity check
        "shared_same_weights": tmp_path / SAME_WEIGHTS_BIN,
        "shared_buckets": tmp_path / SHARED_BUCKETS_BIN,
        **{f"bucket_{r}": tmp_path / BUCKET_BIN.format(rows=r) for r in BUCKET_ROWS},
    }
