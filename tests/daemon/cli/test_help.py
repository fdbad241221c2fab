"""Every command's ``--help`` as a user reads it: each option and argument has
a help text, in plain text (no reStructuredText backticks from docstrings), and
``scripts/demo --help`` answers with a bare system python, before any install."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.daemon.cli.commands import hexvoice

ROOT = Path(__file__).resolve().parents[3]
#: Every ``hexvoice`` help page: each subcommand, and each sub-action.
PAGES = [
    ["--help"],
    ["bundle", "--help"],
    ["bundle", "verify", "--help"],
    ["bundle", "info", "--help"],
    ["doctor", "--help"],
    ["serve", "--help"],
    ["say", "--help"],
    ["say", "--bundle", "x", "--help"],
    ["transcribe", "--help"],
    ["voice", "--help"],
    ["voice", "add", "--help"],
    ["voice", "list", "--help"],
    ["voice", "rm", "--help"],
    ["voices", "--help"],
]
#: argparse's section headings whose entries are options or arguments.
SECTIONS = ("options:", "positional arguments:")
#: argparse writes a help text on the entry's line after two spaces, or on the
#: next lines indented further than the entry.
ENTRY_INDENT = "  "
HELP_INDENT = "    "


def undocumented(page: str) -> list[str]:
    """The entries of ``page`` (an argparse help text) that have no help text."""
    lines = page.splitlines()
    missing, listing = [], False
    for i, line in enumerate(lines):
        if line and not line.startswith(" "):
            listing = line.strip() in SECTIONS or line.strip().endswith(SECTIONS)
            continue
        if not listing or not line.startswith(ENTRY_INDENT) or line[2] == " ":
            continue
        entry = line.strip()
        below = lines[i + 1] if i + 1 < len(lines) else ""
        if "  " not in entry and not (below.startswith(HELP_INDENT) and below.strip()):
            missing.append(entry)
    return missing


def test_the_checker_sees_a_missing_help():
    page = "options:\n  -h, --help  show this\n  --backend {qnn,cpu}\n  --x X  an x\n"
    assert undocumented(page) == ["--backend {qnn,cpu}"]


@pytest.mark.parametrize("argv", PAGES, ids=" ".join)
def test_every_option_has_plain_help(argv: list[str]):
    r = hexvoice(*argv)
    assert r.returncode == 0, r.stderr
    assert "usage:" in r.stdout
    assert undocumented(r.stdout) == [], r.stdout
    assert "`" not in r.stdout, r.stdout


def test_demo_help_needs_no_install(tmp_path: Path):
    """The system python with none of the project's dependencies (no venv)."""
    bare = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")
    assert bare is not None
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHON": bare}
    r = subprocess.run(
        [str(ROOT / "scripts" / "demo"), "--help"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stderr == "", r.stderr  # no "installing hexvoice[...]" line
    assert r.stdout.startswith("usage: scripts/demo")
    assert undocumented(r.stdout) == [], r.stdout
