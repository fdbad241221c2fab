from __future__ import annotations

import numpy as np

from daemon.engines.gptsovits.frontend.symbols import (
    V2_SYMBOL_COUNT,
    phones_to_ids,
    symbol_ids,
    symbols,
)


def test_table_has_upstream_size_and_landmark_ids() -> None:
    table = symbols()
    assert len(table) == V2_SYMBOL_COUNT == 732
    assert len(set(table)) == 732
    ids = symbol_ids()
    # Landmarks from docs/gpt-sovits.md, symbol table / Appendix A.
    expected = {
        "!": 0,
        ",": 1,
        "-": 2,
        ".": 3,
        "?": 4,
        "AA": 5,
        "EE": 33,
        "OO": 66,
        "SP": 77,
        "SP2": 78,
        "SP3": 79,
        "UNK": 86,
        "_": 95,
        "…": 321,
        "[": 322,
        "]": 323,
        "ㄱ": 324,
        "空": 352,
        "Ya": 353,
        "Yz": 731,
    }
    assert {s: ids[s] for s in expected} == expected


def test_blocks_are_code_point_sorted_like_upstream() -> None:
    table = symbols()
    for start, stop in ((0, 322), (324, 353), (353, 732)):
        block = list(table[start:stop])
        assert block == sorted(block), (start, stop)


def test_phones_to_ids_maps_unknown_to_unk() -> None:
    ids = phones_to_ids(["n", "i2", "not-a-phone", ","])
    assert ids.dtype == np.int64
    assert ids.tolist() == [227, 167, 86, 1]
