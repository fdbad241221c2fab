"""``hexvoice bundle verify`` as a user runs it: a good bundle prints its one
answer line and nothing else (library banners and QNN's routine warnings go to
the debug log), and ``-v`` still shows them."""

from __future__ import annotations

import subprocess

from tests.daemon.cli.commands import hexvoice
from tests.daemon.conftest import ServiceVoice


def _verify(voice: ServiceVoice, *flags: str) -> subprocess.CompletedProcess[str]:
    return hexvoice(*flags, "bundle", "verify", str(voice.bundle), env=voice.env)


def test_a_good_bundle_is_one_quiet_line(test_voice: ServiceVoice):
    r = _verify(test_voice)
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"{test_voice.bundle}: OK (1 files, 1 graphs)\n", r.stdout
    assert r.stderr == "", r.stderr


def test_verbose_still_shows_what_the_libraries_said(test_voice: ServiceVoice):
    r = _verify(test_voice, "-v")
    assert r.returncode == 0, r.stderr
    assert "loaded QnnLibrary(" in r.stderr
    assert "DEBUG qnnrt.native: # LIBNATIVE" in r.stderr
