"""A build under terms the user must accept: refused before it starts unless
--accept-license names them, and the accepted id recorded in voice.yaml is what
the engine checks where it runs."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from daemon.sdk.bundles.manifest import MANIFEST, Bundle
from daemon.sdk.license import LicenseNotAccepted, check_accepted
from scripts.common import bundling
from scripts.common.build.license import (
    EXIT_NOT_ACCEPTED,
    add_accept_license,
    require_accepted,
)
from tests.daemon.tone_engine import TEST_LICENSE, LicensedToneEngine

ID = TEST_LICENSE.id


def _parse(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_accept_license(p, TEST_LICENSE)
    return p.parse_args(list(argv))


def _bundle(root: Path, license: str | None) -> Bundle:
    root.mkdir()
    (root / "weights.bin").write_bytes(b"\x00" * 8)
    bundling.finish(
        root,
        engine=LicensedToneEngine.engine_id,
        name="licensed",
        sample_rate=16000,
        languages=("en",),
        graphs={},
        license=license,
    )
    return Bundle.load(root)


def test_a_build_without_the_flag_is_refused_naming_the_terms_and_the_flag() -> None:
    with pytest.raises(LicenseNotAccepted) as caught:
        require_accepted(TEST_LICENSE, _parse().accept_licenses)
    text = str(caught.value)
    assert TEST_LICENSE.title in text and TEST_LICENSE.text in text
    assert f"--accept-license {ID}" in text
    assert EXIT_NOT_ACCEPTED == 78


def test_accepting_other_terms_is_no_acceptance_and_says_what_was_accepted() -> None:
    with pytest.raises(LicenseNotAccepted, match="accepted: other-terms"):
        require_accepted(
            TEST_LICENSE, _parse("--accept-license", "other-terms").accept_licenses
        )


def test_the_accepted_id_is_recorded_and_passes_the_engine_check(
    tmp_path: Path,
) -> None:
    accepted = _parse("--accept-license", "other-terms", "--accept-license", ID)
    recorded = require_accepted(TEST_LICENSE, accepted.accept_licenses)
    bundle = _bundle(tmp_path / "b", recorded)
    assert f"license: {ID}" in (bundle.root / MANIFEST).read_text()
    assert check_accepted(LicensedToneEngine, bundle, {ID}) == TEST_LICENSE


def test_a_bundle_built_without_acceptance_is_refused_where_it_runs(
    tmp_path: Path,
) -> None:
    bundle = _bundle(tmp_path / "b", None)
    assert "license:" not in (bundle.root / MANIFEST).read_text()
    with pytest.raises(
        LicenseNotAccepted, match=f"build it again with --accept-license {ID}"
    ):
        check_accepted(LicensedToneEngine, bundle, {ID})
