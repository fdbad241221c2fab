# shellcheck shell=bash
# Shared by scripts/test and scripts/demo: create .venv once and install hexvoice
# with the given extras.  Every step says what it does and how long it took.  The
# install is skipped when the venv holds a stamp for this pyproject.toml, these
# extras and this interpreter: hexvoice is installed editable, so a source change
# needs no reinstall; only a change of dependencies or entry points does.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${HEXVOICE_VENV:-$ROOT/.venv}"
PYTHON="${PYTHON:-python3}"

_hexvoice_say() { printf '==> %s\n' "$*" >&2; }

# Seconds since $1 (an $EPOCHREALTIME value; some locales write a comma).
_hexvoice_since() {
    awk -v a="${1/,/.}" -v b="${EPOCHREALTIME/,/.}" 'BEGIN { printf "%.1f", b - a }'
}

# qwen-tts 0.1.1 (the Qwen3-TTS parity oracle) cannot be a pyproject extra: it pins
# transformers==4.57.3 while qwen-asr 0.0.6 (the oracle extra) pins ==4.57.6, so one
# resolver run of both ends in ResolutionImpossible.  Both tiny models run the same on
# 4.57.6, so whenever the extras include the oracle (dev does) qwen-tts is installed
# after the project with --no-deps, together with those of its import-time
# dependencies the project does not already bring, pinned: einops (its 25 Hz
# tokenizer's core_vq, imported by `import qwen_tts`).  Its other requirements come
# with the oracle and sim extras (accelerate, librosa, soundfile, sox, gradio,
# onnxruntime).  torchaudio is left out on purpose: the PyPI wheel is CUDA-linked and
# fails to load on torch-cpu; only the 25 Hz tokenizer uses it, and
# scripts/qwen3/tts/upstream.py stubs it when it does not import.
HEXVOICE_NODEPS=(qwen-tts==0.1.1 einops==0.8.2)

# Whether the extras $1 (comma-separated) pull the oracle extra.
_hexvoice_wants_oracle() {
    [[ ",$1," == *,oracle,* || ",$1," == *,dev,* ]]
}

# What an install of these extras depends on: pyproject.toml, the extras, the
# checkout it points at (editable), the interpreter and the --no-deps pins.
_hexvoice_key() {
    { cat "$ROOT/pyproject.toml"; echo "$1"; echo "$ROOT"; "$VENV/bin/python" -VV
      echo "${HEXVOICE_NODEPS[*]}"; } |
        sha256sum | cut -d' ' -f1
}

# pip install "$@" with its full output in $VENV/pip-install.log; shows only the
# big downloads (so a long wait has a visible reason) and, on failure, the log's end.
_hexvoice_pip() {
    local log="$VENV/${_hexvoice_log:-pip-install.log}"
    if ! "$VENV/bin/python" -m pip install --progress-bar off "$@" 2>&1 | tee "$log" |
        awk '/Downloading/ && !/\.metadata/ && / [MG]B\)$/ {
                 sub(/^ +/, ""); print "    " $0; fflush() }' >&2; then
        tail -n 25 "$log" >&2
        _hexvoice_say "pip failed; full output in $log"
        return 1
    fi
}

hexvoice_venv() {
    local extras="$1"
    local stamp="$VENV/.hexvoice-installed-${extras//,/+}"
    local t0 key installed
    if [[ ! -x "$VENV/bin/python" ]]; then
        t0=$EPOCHREALTIME
        _hexvoice_say "creating $VENV ($("$PYTHON" -V 2>&1)) and upgrading pip"
        "$PYTHON" -m venv "$VENV"
        "$VENV/bin/python" -m pip install --quiet --upgrade pip
        _hexvoice_say "venv ready in $(_hexvoice_since "$t0") s"
    fi
    key="$(_hexvoice_key "$extras")"
    if [[ -f "$stamp" && "$(<"$stamp")" == "$key" ]]; then
        _hexvoice_say "hexvoice[$extras] is installed in $VENV (pyproject.toml" \
            "unchanged; delete $stamp to force a reinstall)"
        return 0
    fi
    rm -f "$stamp"
    t0=$EPOCHREALTIME
    _hexvoice_say "installing hexvoice[$extras] (editable) and its dependencies into" \
        "$VENV; the first time this downloads large wheels (torch, onnxruntime-qnn)" \
        "and takes minutes"
    _hexvoice_pip --editable "${ROOT}[$extras]"
    installed="$(grep -m1 '^Successfully installed' "$VENV/pip-install.log" || true)"
    installed="${installed#Successfully installed }"
    _hexvoice_say "installed $(wc -w <<<"$installed") package(s) in" \
        "$(_hexvoice_since "$t0") s (list: $VENV/pip-install.log)"
    if _hexvoice_wants_oracle "$extras"; then
        t0=$EPOCHREALTIME
        _hexvoice_say "installing ${HEXVOICE_NODEPS[*]} with --no-deps (qwen-tts pins" \
            "transformers 4.57.3, qwen-asr 4.57.6; both run on 4.57.6)"
        _hexvoice_log=pip-install-nodeps.log _hexvoice_pip --no-deps "${HEXVOICE_NODEPS[@]}"
        _hexvoice_say "done in $(_hexvoice_since "$t0") s"
    fi
    printf '%s\n' "$key" >"$stamp"
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
    local t0=$EPOCHREALTIME
    echo "==> apt-get install ${missing[*]}" >&2
    "${sudo[@]}" apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" \
        >/dev/null 2>&1 || echo "==> apt-get failed for ${missing[*]}; dependent tests will skip" >&2
    echo "==> apt-get done in $(_hexvoice_since "$t0") s" >&2
}
