"""The constrained field types the schemas share (voice.yaml params, manifests,
target profiles), declared once so "a count" means the same bound everywhere.

Each is an ``Annotated`` type the reader (reader.py) checks and words from its
``msgspec.Meta``: a refused ``Count`` reads "expected an integer >= 1", a
refused ``Text`` "expected a non-empty string" (wording.py).
"""

from __future__ import annotations

from typing import Annotated

import msgspec

#: Sizes and counts of graphs, layers, frames, buckets: at least one.
Count = Annotated[int, msgspec.Meta(ge=1)]
#: Token ids, step counts, overlaps, offsets: zero or more.
Index = Annotated[int, msgspec.Meta(ge=0)]
#: A tensor dimension as a manifest records it (worded "> 0", not ">= 1").
Dim = Annotated[int, msgspec.Meta(gt=0)]
#: Scales, rates, temperatures: above zero.
Positive = Annotated[float, msgspec.Meta(gt=0)]
#: Names, paths, hashes: a string with at least one character.
Text = Annotated[str, msgspec.Meta(min_length=1)]
#: Bucket sizes of a graph family: at least one bucket, each a ``Count``.
Sizes = Annotated[tuple[Count, ...], msgspec.Meta(min_length=1)]
