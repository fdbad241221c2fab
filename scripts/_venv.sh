# shellcheck shell=bash
# Shared by scripts/test and scripts/demo: create .venv once and install hexvoice
# with the given extras.  Re-running is cheap (pip skips what is installed).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${HEXVOICE_VENV:-$ROOT/.venv}"
PYTHON="${PYTHON:-python3}"

hexvoice_venv() {
    local extras="$1"
    if [[ ! -x "$VENV/bin/python" ]]; then
        echo "==> creating $VENV" >&2
        "$PYTHON" -m venv "$VENV"
        "$VENV/bin/python" -m pip install --quiet --upgrade pip
    fi
    echo "==> installing hexvoice[$extras] into $VENV" >&2
    "$VENV/bin/python" -m pip install --quiet --editable "$ROOT[$extras]"
}
