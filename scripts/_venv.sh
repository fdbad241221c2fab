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
    "$VENV/bin/python" -m pip install --quiet --editable "${ROOT}[$extras]"
}

# Debian packages the tests use (shellcheck, systemd tools, curl).  Installed with
# apt when missing and we may (root, or passwordless sudo); otherwise the tests that
# need them skip and say why.
hexvoice_debs() {
    local missing=()
    local pkg cmd
    for pair in "$@"; do
        pkg="${pair%%:*}"
        cmd="${pair##*:}"
        command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
    done
    ((${#missing[@]})) || return 0
    local sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        if sudo -n true 2>/dev/null; then sudo=(sudo -n); else
            echo "==> not installing ${missing[*]} (needs root); dependent tests will skip" >&2
            return 0
        fi
    fi
    echo "==> apt-get install ${missing[*]}" >&2
    "${sudo[@]}" apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" \
        >/dev/null 2>&1 || echo "==> apt-get failed for ${missing[*]}; dependent tests will skip" >&2
}
