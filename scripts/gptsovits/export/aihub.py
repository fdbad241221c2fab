"""Optional cloud compile through Qualcomm AI Hub (``--compiler aihub``).

The local QNN EP compile is the default and the tested path. AI Hub needs its
client (PyPI ``qai-hub``) and an API token configured with
``qai-hub configure --api_token TOKEN`` (written to ~/.qai_hub/client.ini) or
the QAIHUB_API_TOKEN environment variable; both are checked before any work.
AI Hub no longer emits context binaries directly (docs/board.md, port pitfalls, 8):
a graph is compiled to a QNN DLC and then linked into a context binary.
"""

from __future__ import annotations

import os
from pathlib import Path

CONFIG_FILE = Path("~/.qai_hub/client.ini")
TOKEN_ENV = "QAIHUB_API_TOKEN"
#: the board we target -> AI Hub device name
DEVICES = {"qcs8550": "QCS8550 (Proxy)"}
COMPILE_OPTIONS = "--target_runtime qnn_dlc --quantize_full_type float16"


class AiHubUnavailable(RuntimeError):
    """The AI Hub client or its credentials are missing."""


def check_available(target: str) -> object:
    """The imported ``qai_hub`` module, or a clear error saying what is missing."""
    if target not in DEVICES:
        raise AiHubUnavailable(
            f"--compiler aihub compiles for a real device; target {target!r} has "
            f"none (choose one of {sorted(DEVICES)})"
        )
    try:
        import qai_hub
    except ImportError as exc:
        raise AiHubUnavailable(
            "--compiler aihub needs the AI Hub client: pip install qai-hub "
            "(or use the default local compiler)"
        ) from exc
    if not os.environ.get(TOKEN_ENV) and not CONFIG_FILE.expanduser().is_file():
        raise AiHubUnavailable(
            f"--compiler aihub: no AI Hub credentials ({CONFIG_FILE} missing and "
            f"{TOKEN_ENV} unset); run: qai-hub configure --api_token TOKEN"
        )
    return qai_hub


def compile_aihub(onnx_path: Path, out_dir: Path, name: str, target: str) -> Path:
    """Compile + link one graph on AI Hub; returns ``out_dir/<name>.bin``."""
    hub = check_available(target)
    device = hub.Device(DEVICES[target])
    compiled = hub.submit_compile_job(
        model=str(onnx_path), device=device, options=COMPILE_OPTIONS, name=name
    )
    linked = hub.submit_link_job(compiled.get_target_model(), name=name)
    out_dir.mkdir(parents=True, exist_ok=True)
    dest = out_dir / f"{name}.bin"
    linked.download_target_model(str(dest))
    return dest
