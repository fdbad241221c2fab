"""How a manifest names the graphs of a bucketed family (``enc_P64``,
``prefill_128``): one static graph per size, keyed by stem and size."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BucketKey:
    """The key of one graph of a bucketed family: the family's stem and the
    bucket's static size (``BucketKey("enc_P")(64) == "enc_P64"``).  The build
    that writes a manifest and the engine that looks its graphs up call the same
    one, so the two cannot spell a key differently."""

    stem: str

    def __call__(self, size: int) -> str:
        return f"{self.stem}{size}"
