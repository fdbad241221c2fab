"""serve.py starts ``hexvoice serve`` from the repository root."""

from __future__ import annotations

from scripts.bench.service.serve import ROOT


def test_the_child_runs_from_the_repository_root() -> None:
    # start_daemon runs `python -m daemon.cli` with ROOT as its working directory
    assert (ROOT / "daemon" / "cli" / "__main__.py").is_file()
    assert (ROOT / "scripts" / "bench" / "service" / "serve.py").is_file()
