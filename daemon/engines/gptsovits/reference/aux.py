"""Several references, as upstream's ``aux_ref_audio_paths``: one style.

Upstream (module/models.py ``SynthesizerTrn.decode``, list-of-refer branch;
docs/gpt-sovits.md, SoVITS decode, step 1) computes ``ge`` per reference
*after* PReLU and averages them, ``torch.stack(ges, 0).mean(0)``; ``ge512`` is
then ``ge_to512(mean ge)``.  ``ge_to512`` is a Linear layer, and an affine map
commutes with a mean (the weights 1/n sum to 1, so the bias survives once), so
the mean of the per-reference ``ge512`` is the same vector up to float rounding
(tests/daemon/engines/gptsovits/reference/test_aux.py measures it against the
torch Linear).  That lets the style graph (``ref_enc`` + sv projection + PReLU
+ ge_to512) run once per clip and the average happen here, on the CPU.

Used by scripts/build-gptsovits ``--aux-ref``
(scripts/gptsovits/pipeline/aux_refs.py) and by a zero-shot registration with
aux clips (cloning/clone.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: (ge [1, gin, 1], ge512 [1, mrte, 1]) of one reference
Style = tuple[np.ndarray, np.ndarray]


def mean_style(styles: Sequence[Style]) -> Style:
    """The average (ge, ge512) over ``styles`` (main reference first, then the
    aux ones; the order does not change a mean).  ValueError for none, for
    mismatched shapes or non-finite values."""
    if not styles:
        raise ValueError("mean_style needs at least one (ge, ge512) pair")
    ges, ge512s = [], []
    for i, style in enumerate(styles):
        if len(style) != 2:
            raise ValueError(f"style {i}: expected a (ge, ge512) pair")
        ge, ge512 = (np.asarray(x, np.float32) for x in style)
        for name, x, first in (("ge", ge, ges), ("ge512", ge512, ge512s)):
            if x.ndim != 3 or x.shape[0] != 1 or x.shape[2] != 1:
                raise ValueError(f"style {i}: {name} must be [1, C, 1], got {x.shape}")
            if first and x.shape != first[0].shape:
                raise ValueError(
                    f"style {i}: {name} {x.shape} differs from the first "
                    f"reference's {first[0].shape}"
                )
            if not np.isfinite(x).all():
                raise ValueError(f"style {i}: {name} is not finite")
            first.append(x)
    # float32 like upstream's torch mean over the stacked references
    return (
        np.mean(np.stack(ges), axis=0, dtype=np.float32),
        np.mean(np.stack(ge512s), axis=0, dtype=np.float32),
    )
