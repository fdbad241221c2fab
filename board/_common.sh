# shellcheck shell=bash
# Shared by board/install.sh and board/uninstall.sh.  The caller sets PROG
# (for messages) and DRY_RUN before using these.

die() {
    echo "$PROG: error: $*" >&2
    exit 1
}
note() { echo "# $*"; }
# Print an action, then do it (unless --dry-run).
run() {
    local a shown=()
    for a in "$@"; do
        if [[ $a =~ ^[A-Za-z0-9_./=:,+@%-]+$ ]]; then shown+=("$a"); else shown+=("${a@Q}"); fi
    done
    echo "+ ${shown[*]}"
    if ((!DRY_RUN)); then "$@"; fi
}
