# shellcheck shell=bash
# Shared by board/install.sh and board/uninstall.sh.  The caller sets PROG,
# ROOT and DRY_RUN before using these.

die() {
    echo "$PROG: error: $*" >&2
    exit 1
}
note() { echo "# $*"; }
# The header comment of the calling script, as --help.
usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 0
}
# Changing / needs root; --dry-run and --root trees do not.
need_root() {
    if [[ $ROOT == / ]] && ((!DRY_RUN)) && ((EUID != 0)); then
        die "run as root (sudo), or try --dry-run"
    fi
}
# Print an action, then do it (unless --dry-run).
run() {
    local a shown=()
    for a in "$@"; do
        if [[ $a =~ ^[A-Za-z0-9_./=:,+@%-]+$ ]]; then shown+=("$a"); else shown+=("${a@Q}"); fi
    done
    echo "+ ${shown[*]}"
    if ((!DRY_RUN)); then "$@"; fi
}
