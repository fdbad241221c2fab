"""Engines whose weights come under a licence the user must accept first.

Some model families are published under terms that bind whoever runs them
(IndexTTS-2: the bilibili Model Use License Agreement).  Such an engine
declares its ``License``; nothing of it builds, loads or speaks until the user
has accepted those terms twice over: once when building (the build records
``license: ID`` in voice.yaml, so a bundle says under which terms it was made)
and once where it runs (``accept_licenses`` in the service config, or
``--accept-license ID`` on the command line).  A refusal names the agreement,
where to read it and how to accept it, and is a configuration error (exit 78),
raised before any model loads.  Engines under an open licence declare nothing.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Final

from daemon.sdk.bundles.manifest import MANIFEST, Bundle, BundleError

#: A licence id as flags and config keys spell it: lowercase words and dashes.
LICENSE_ID: Final = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@dataclass(frozen=True)
class License:
    """Terms an engine runs under, which its user accepts by ``id``."""

    #: how the user accepts it (``--accept-license ID``), e.g. "bilibili-model-use"
    id: str
    #: the agreement's own title
    title: str
    #: where its full text is (the engine's distribution ships it)
    text: str

    def __post_init__(self) -> None:
        if not LICENSE_ID.match(self.id):
            raise ValueError(f"License.id: lowercase words and dashes, not {self.id!r}")

    def how_to_accept(self) -> str:
        return (
            f"read it ({self.text}) and accept it with `accept_licenses: "
            f"[{self.id}]` in the config, or `--accept-license {self.id}`"
        )


class LicenseNotAccepted(BundleError):
    """An engine under a licence the user has not accepted (where it runs, or
    when its bundle was built).  A configuration error: nothing was loaded."""


def license_of(engine_cls: Any) -> License | None:
    """The licence ``engine_cls`` declares (None: none to accept)."""
    declared = getattr(engine_cls, "license", None)
    return declared if isinstance(declared, License) else None


def check_accepted(
    engine_cls: Any, bundle: Bundle, accepted: Collection[str]
) -> License | None:
    """Refuse ``bundle`` unless the licence its engine declares is in
    ``accepted`` and its voice.yaml records it was built under it."""
    terms = license_of(engine_cls)
    if terms is None:
        return None
    engine = getattr(engine_cls, "engine_id", bundle.engine)
    if terms.id not in accepted:
        raise LicenseNotAccepted(
            f"{bundle.root}: engine {engine!r} runs under the {terms.title}, "
            f"which has not been accepted: {terms.how_to_accept()}"
        )
    if bundle.license != terms.id:
        found = f"license: {bundle.license}" if bundle.license else "no license"
        raise LicenseNotAccepted(
            f"{bundle.root / MANIFEST}: expected license: {terms.id} (the bundle's "
            f"build accepts the {terms.title}), found {found}; build it again "
            f"with --accept-license {terms.id}"
        )
    return terms
