"""Where the codec windows fall: the streaming schedule, upstream's chunking
and a whole utterance's (a request that is not streamed)."""

from __future__ import annotations

from typing import Any

import pytest

from daemon.engines.qwen3.tts.codec.stream import (
    Schedule,
    Window,
    exact_frames,
    schedule_of,
    streaming,
    upstream,
    whole,
)
from daemon.engines.qwen3.tts.params import TtsParams
from tests.daemon.engines.qwen3.tts.test_params import base


def params(windows: list[dict[str, int]], first: int) -> TtsParams:
    data: dict[str, Any] = base()
    data["codec"].update(windows=windows, first_frames=first)
    return TtsParams.from_mapping(data)


def calls(s: Schedule, n: int) -> list[Window]:
    out, start = [], 0
    while start < n:
        w = s.window(len(out), start, n)
        out.append(w)
        start = w.stop
    return out


def test_streaming_ramps_then_repeats_the_last_window() -> None:
    p = params([{"frames": 8, "context": 4}, {"frames": 16, "context": 6}], first=4)
    got = calls(streaming(p.codec), 40)
    assert got == [
        Window(0, 4, 0, 8),  # no context, the smallest graph that holds 4
        Window(4, 8, 4, 8),  # windows[0]: 8 - 4 new frames after 4 of context
        Window(8, 18, 6, 16),  # windows[1]: 16 - 6 new
        Window(18, 28, 6, 16),  # ... repeated
        Window(28, 38, 6, 16),
        Window(38, 40, 6, 16),  # partial: right-padded in the same graph
    ]
    assert sum(w.stop - w.start for w in got) == 40


def test_context_is_clipped_to_the_frames_that_exist() -> None:
    """upstream: context_size = left if start - left > 0 else start; the new
    frames fill the rest of the graph."""
    p = params([{"frames": 16, "context": 12}], first=3)
    got = calls(streaming(p.codec), 30)
    assert got == [Window(0, 3, 0, 16), Window(3, 16, 3, 16), Window(16, 20, 12, 16),
                   Window(20, 24, 12, 16), Window(24, 28, 12, 16),
                   Window(28, 30, 12, 16)]  # fmt: skip


def test_windows_keep_to_upstreams_chunks() -> None:
    """A window never crosses upstream's chunk end (300) and reaches back no
    further than upstream's own call for the chunk (275): the same frames as
    upstream's decode, so a context of the receptive field is exact."""
    p = params([{"frames": 40, "context": 30}, {"frames": 200, "context": 150}],
               first=8)  # fmt: skip
    s = streaming(p.codec)
    got = calls(s, 700)
    assert Window(250, 300, 150, 200) in got  # cut at the chunk end
    assert Window(300, 475, 25, 200) in got  # upstream's 25 frames, graph filled
    assert Window(475, 525, 150, 200) in got
    assert [s.origin(x) for x in (0, 299, 300, 599, 600)] == [0, 0, 275, 275, 575]


def test_first_window_takes_the_smallest_graph_that_holds_it() -> None:
    p = params([{"frames": 16, "context": 4}, {"frames": 8, "context": 2}], first=6)
    s = streaming(p.codec)
    assert s.first_graph == 8 and s.graphs() == {8, 16}
    p = params([{"frames": 16, "context": 4}, {"frames": 8, "context": 2}], first=9)
    assert streaming(p.codec).first_graph == 16


def test_upstream_is_chunked_decode_300_25() -> None:
    p = params([{"frames": 8, "context": 4}], first=4)
    s = upstream(p.codec)
    assert calls(s, 250) == [Window(0, 250, 0, 325)]
    assert calls(s, 700) == [Window(0, 300, 0, 325), Window(300, 600, 25, 325),
                             Window(600, 700, 25, 325)]  # fmt: skip
    assert s.full(0, 0) == 300 and s.full(1, 300) == 600


def test_schedule_names() -> None:
    p = params([{"frames": 8, "context": 4}], first=4)
    assert schedule_of(p.codec, "upstream") == upstream(p.codec)
    custom = Schedule(12, 16, ((16, 4),), 300, 25)
    assert schedule_of(p.codec, custom) is custom
    with pytest.raises(ValueError, match="'streaming' or 'upstream'"):
        schedule_of(p.codec, "fast")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="first window of 20 frames in codec_16"):
        Schedule(20, 16, ((16, 4),), 300, 25)
    with pytest.raises(ValueError, match="bad windows"):
        Schedule(4, 16, ((16, 16),), 300, 25)


def test_a_whole_utterance_is_upstreams_chunking_in_fitting_graphs() -> None:
    """Not streamed, with codec_325 in the bundle: every window is upstream's
    own call (no context in the first chunk, 25 frames later), each run in the
    smallest graph that holds it."""
    p = params([{"frames": 4, "context": 2}, {"frames": 16, "context": 6}], first=4)
    s = whole(p.codec, (4, 8, 16, 325))
    assert exact_frames(p.codec, (4, 8, 16, 325)) is None
    assert calls(s, 3) == [Window(0, 3, 0, 4)]
    assert calls(s, 24) == [Window(0, 24, 0, 325)]
    assert calls(s, 310) == [Window(0, 300, 0, 325), Window(300, 310, 25, 325)]
    assert s.plan(610)[1:] == [Window(300, 600, 25, 325), Window(600, 610, 25, 325)]
    assert s.graphs() == {4, 8, 16, 325}


def test_a_whole_utterance_past_the_largest_graph_is_approximate() -> None:
    """Without a graph of upstream's chunk and context: exact up to the
    largest graph's frames (one call from frame 0), then windows of it with
    three quarters of context (a quarter of each call new)."""
    p = params([{"frames": 4, "context": 2}, {"frames": 16, "context": 6}], first=4)
    assert exact_frames(p.codec, (4, 16)) == 16
    s = whole(p.codec, (4, 16))
    assert calls(s, 16) == [Window(0, 16, 0, 16)]
    assert calls(s, 26) == [Window(0, 16, 0, 16), Window(16, 20, 12, 16),
                            Window(20, 24, 12, 16), Window(24, 26, 12, 16)]  # fmt: skip
    # a graph longer than a chunk: its first chunk in one call
    assert exact_frames(p.codec, (4, 310)) == 300
    assert calls(whole(p.codec, (4, 310)), 400)[0] == Window(0, 300, 0, 310)
