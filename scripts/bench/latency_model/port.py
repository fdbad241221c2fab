"""The reference port's QCS8550 timings and graph I/O (docs/board.md).

zhouzengming/gpt-sovits-qnn timed its six fp16 graphs on a QCS8550 (HTP v73)
twice: AI Hub's profiler (accelerator time) and its own board runtime (Python
ctypes dispatch included), docs/board.md, reference port timings. Its graph I/O is all
float32/int32 (reference port graphs), so
the bytes each call moves are taken from that table, not from our graphs (ours
feed fp16 K/V and a vocoder frame mask); MACs and weights come from our
full-size export of the same layers (full_size/gptsovits.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Final

from scripts.bench.latency_model.count import GraphCost
from scripts.bench.latency_model.fit import Point

#: docs/board.md, reference port timings, AI Hub: profiled per call, ms (t2s_decode per
#: step, vits_gen per window)
PROFILED_MS: Final = {
    "g2pw": 18.2,
    "bert": 13.9,
    "t2s_prefill": 36.0,
    "t2s_decode": 11.95,
    "vits_enc": 47.9,
    "vits_gen": 97.2,
}
#: docs/board.md, reference port timings, on the board, Python dispatch included, ms
DISPATCH_MS: Final = {
    "g2pw": 19.1,
    "bert": 17.1,
    "t2s_prefill": 65.0,
    "t2s_decode": 12.4,
    "vits_enc": 47.6,
    "vits_gen": 97.4,
}
#: our full-size export of each port graph (t2s_decode: the port's L = 1024)
OUR_GRAPH: Final = {
    "g2pw": "g2pw",
    "bert": "bert",
    "t2s_prefill": "t2s_prefill",
    "t2s_decode": "t2s_decode_1024",
    "vits_enc": "vits_enc",
    "vits_gen": "vits_gen",
}
#: docs/board.md, port pitfalls, 13: "L=768 would suffice (measured 15 % faster,
#: byte-identical output)": a seventh point, t2s_decode at L = 768, ASSUMED to hold for
#: both timing sets (the port does not say which clock it read)
L768_SPEEDUP: Final = 0.15
#: count.py on full_size/gptsovits.py's exports (random weights, full shapes),
#: 2026-12-01; `python -m scripts.bench.latency_model --recount` recounts and
#: reports any difference
PORT_COSTS: Final = {
    "g2pw": GraphCost(
        "g2pw", 44090523648, 603979776, 0, 170767458, 6176, 24576, 0, 233586704
    ),
    "bert": GraphCost(
        "bert", 36171677696, 738197504, 0, 554193672, 1024, 524288, 0, 136315008
    ),
    "t2s_prefill": GraphCost(
        "t2s_prefill",
        45097156608,
        6442450944,
        0,
        151151594,
        2097152,
        26214400,
        0,
        547880960,
    ),
    "t2s_decode_768": GraphCost(
        "t2s_decode_768",
        94896640,
        18874368,
        0,
        152201466,
        37753856,
        53252,
        37748736,
        40038017,
    ),
    "t2s_decode_1024": GraphCost(
        "t2s_decode_1024",
        101188096,
        25165824,
        0,
        152201466,
        50337792,
        53252,
        50331648,
        53211009,
    ),
    "vits_enc": GraphCost(
        "vits_enc",
        8677573632,
        679284736,
        7985266688,
        55513240,
        2026960,
        384000,
        0,
        86944232,
    ),
    "vits_gen": GraphCost(
        "vits_gen", 39030161408, 0, 39030161408, 29811170, 78208, 245760, 0, 205232544
    ),
}
_F = 4  # float32 / int32 bytes
#: docs/board.md, reference port graphs: (inputs, outputs) shapes per graph, every
#: tensor 4 bytes/element
PORT_IO: Final = {
    "g2pw": ([(8, 64)] * 3 + [(8,)], [(8, 768)]),
    "bert": ([(1, 128), (1, 1, 1, 128)], [(1, 128, 1024)]),
    "t2s_prefill": (
        [(1, 512, 512), (1, 1, 512, 512)],
        [(1, 512, 512), (24, 16, 512, 32), (24, 16, 512, 32)],
    ),
    "t2s_decode": (
        [(1, 1, 512), (24, 16, 32, 1024), (24, 16, 1024, 32), (1, 1, 1, 1024)],
        [(1, 1025), (24, 16, 32, 1), (24, 16, 1, 32)],
    ),
    "vits_enc": (
        [
            (1, 768, 500),
            (1, 1, 500),
            (1, 192, 128),
            (1, 1, 128),
            (1, 512, 1),
            (1, 1024, 1),
            (1, 192, 500),
        ],
        [(1, 192, 500)],
    ),
    "vits_gen": ([(1, 192, 96), (1, 1024, 1)], [(1, 1, 61440)]),
}
PORT_IO["t2s_decode_768"] = (
    [(1, 1, 512), (24, 16, 32, 768), (24, 16, 768, 32), (1, 1, 1, 768)],
    PORT_IO["t2s_decode"][1],
)
TIMINGS: Final = {"profiled": PROFILED_MS, "dispatch": DISPATCH_MS}


def port_io_bytes(graph: str) -> int:
    ins, outs = PORT_IO[graph]
    return _F * sum(math.prod(s) for s in (*ins, *outs))


def port_points(
    timings_ms: Mapping[str, float], costs: Mapping[str, GraphCost] = PORT_COSTS
) -> list[Point]:
    """One fit point per port graph (+ the derived L = 768 decode point): our
    MACs and weights, the port's float32 I/O bytes, its time in seconds."""
    out = []
    for graph, ms in timings_ms.items():
        c = costs[OUR_GRAPH[graph]]
        out.append(Point(graph, ms / 1e3, c.features(port_io_bytes(graph))))
    ms = timings_ms["t2s_decode"] * (1 - L768_SPEEDUP)
    c = costs["t2s_decode_768"]
    out.append(
        Point("t2s_decode_768*", ms / 1e3, c.features(port_io_bytes("t2s_decode_768")))
    )
    return out
