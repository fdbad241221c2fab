"""A build's side of licence acceptance (daemon/sdk/license.py): the
``--accept-license ID`` flag, the refusal before any stage runs, and the id the
build records as ``license:`` in the bundle's voice.yaml
(scripts/common/bundling.finish), which the engine checks again where it runs.

A build under terms the user has not accepted must not start: not a download,
an export or a compile (those are Use under such agreements).  So the check
runs on the parsed flags, before the stages, and is a configuration error
(EX_CONFIG, as a service that refuses the same bundle exits).
"""

from __future__ import annotations

import argparse
from collections.abc import Collection
from typing import Final

from daemon.sdk.license import License, LicenseNotAccepted
from daemon.service.edge.systemd import EX_CONFIG

FLAG: Final = "--accept-license"
#: what a build exits with when it refuses (sysexits.h EX_CONFIG)
EXIT_NOT_ACCEPTED: Final = EX_CONFIG


def add_accept_license(p: argparse.ArgumentParser, terms: License) -> None:
    """``--accept-license ID`` (repeatable) on a build's parser for ``terms``."""
    p.add_argument(
        FLAG,
        dest="accept_licenses",
        action="append",
        default=[],
        metavar="ID",
        help=f"accept the {terms.title} ({terms.text}): {FLAG} {terms.id}",
    )


def require_accepted(terms: License, accepted: Collection[str]) -> str:
    """``terms.id`` (what the bundle records) if the user accepted ``terms``;
    LicenseNotAccepted naming the agreement and the flag otherwise."""
    if terms.id not in accepted:
        others = f" (accepted: {', '.join(sorted(accepted))})" if accepted else ""
        raise LicenseNotAccepted(
            f"this build makes a Derivative Work under the {terms.title}, "
            f"which has not been accepted{others}: read {terms.text} and "
            f"build with {FLAG} {terms.id}; nothing was downloaded or built"
        )
    return terms.id
