"""scripts/_venv.sh: says what it installs and how long it took; skips an unchanged
install; the project's own metadata builds without setuptools deprecations.

The shell function runs for real (python -m venv, pip, setuptools from PyPI or
pip's cache) on a scratch project of one empty module, so an install costs
seconds, not the minutes of hexvoice's own dependencies.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INSTALL_TIMEOUT_S = 300.0
SCRATCH_PYPROJECT = """\
[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "hexvoice-venv-scratch"
version = "0.0.1"
description = "{description}"
license = "Apache-2.0"

[project.optional-dependencies]
one = []
two = []

[tool.setuptools]
py-modules = ["scratch_mod"]
"""


def _project(root: Path, description: str = "first") -> Path:
    (root / "scripts").mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "scripts" / "_venv.sh", root / "scripts" / "_venv.sh")
    (root / "scratch_mod.py").write_text("VALUE = 1\n")
    (root / "pyproject.toml").write_text(
        SCRATCH_PYPROJECT.format(description=description)
    )
    return root


def _venv(project: Path, venv: Path, extras: str) -> tuple[str, float]:
    """(stderr, seconds) of one ``hexvoice_venv EXTRAS`` run."""
    env = {**os.environ, "HEXVOICE_VENV": str(venv), "PYTHON": sys._base_executable}
    env.pop("VIRTUAL_ENV", None)
    start = time.monotonic()
    p = subprocess.run(
        ["bash", "-c", 'source scripts/_venv.sh && hexvoice_venv "$1"', "-", extras],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
    )
    took = time.monotonic() - start
    assert p.returncode == 0, p.stderr
    return p.stderr, took


@pytest.mark.slow
def test_venv_announces_each_step_and_skips_an_unchanged_install(tmp_path: Path):
    project, venv = _project(tmp_path / "proj"), tmp_path / "venv"

    first, _ = _venv(project, venv, "one")
    assert f"==> creating {venv}" in first
    assert re.search(r"==> venv ready in [0-9.]+ s", first)
    assert re.search(r"==> installing hexvoice\[one\] \(editable\)", first)
    assert re.search(r"==> installed [1-9]\d* package\(s\) in [0-9.]+ s", first)
    assert "deprecat" not in (venv / "pip-install.log").read_text().lower()
    log_mtime = (venv / "pip-install.log").stat().st_mtime_ns

    again, took = _venv(project, venv, "one")
    assert "installing" not in again and "is installed" in again, again
    assert (venv / "pip-install.log").stat().st_mtime_ns == log_mtime  # no pip
    assert took < 5.0

    # Editable: a source change is live without any reinstall.
    (project / "scratch_mod.py").write_text("VALUE = 2\n")
    show = "import scratch_mod; print(scratch_mod.VALUE)"
    out = subprocess.run(
        [str(venv / "bin/python"), "-c", show],
        capture_output=True, text=True, check=True, cwd=tmp_path,
    )  # fmt: skip
    assert out.stdout.strip() == "2"

    # Other extras, or a changed pyproject.toml, do reinstall.
    other, _ = _venv(project, venv, "two")
    assert "installing hexvoice[two]" in other
    _project(project, description="changed")
    changed, _ = _venv(project, venv, "one")
    assert "installing hexvoice[one]" in changed and "creating" not in changed


def test_pyproject_metadata_has_no_setuptools_deprecations():
    pytest.importorskip("setuptools")
    from setuptools.config.pyprojecttoml import apply_configuration
    from setuptools.dist import Distribution

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dist = apply_configuration(Distribution(), REPO / "pyproject.toml")
    assert [str(w.message) for w in caught] == []
    assert dist.metadata.license_expression == "Apache-2.0"
    # An SPDX string needs setuptools 77 (PEP 639): older ones refuse to build.
    pin = re.search(r'^requires = \["setuptools>=(\d+)"\]$',
                    (REPO / "pyproject.toml").read_text(), re.M)  # fmt: skip
    assert pin is not None and int(pin[1]) >= 77
