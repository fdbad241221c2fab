#!/usr/bin/env bash
# Undo board/install.sh.  Never touches user data: voices in /var/lib/hexvoice stay,
# and so do /etc/hexvoice and the hexvoice user unless --purge.
#
#   sudo board/uninstall.sh [--purge] [--profile qcs8550] [--python python3]
#                           [--dry-run] [--root DIR]
#
#   --purge     also remove /etc/hexvoice (config edits) and the service user
#   --dry-run   print every action, change nothing
#   --root DIR  act on a tree under DIR instead of / (packaging and tests)
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROFILE=qcs8550
PYTHON=python3
PURGE=0
DRY_RUN=0
ROOT=/
STATE_DIR=/var/lib/hexvoice
CONF_DIR=/etc/hexvoice
UNITS=(hexvoice.socket hexvoice.service)

PROG=uninstall.sh
# shellcheck source=board/_common.sh
source "$REPO/board/_common.sh"
r() { echo "${ROOT%/}$1"; }
has_user() {
    if [[ $ROOT == / ]]; then
        getent passwd "$1" >/dev/null
    else
        grep -q "^$1:" "$ROOT/etc/passwd" 2>/dev/null
    fi
}

while (($#)); do
    case "$1" in
    --purge) PURGE=1 ;;
    --profile) PROFILE="${2:?--profile needs a name}" && shift ;;
    --python) PYTHON="${2:?--python needs an interpreter}" && shift ;;
    --root) : "${2:?--root needs a directory}"; ROOT="$(realpath -m "$2")" && shift ;;
    --dry-run) DRY_RUN=1 ;;
    -h | --help) usage ;;
    *) die "unknown argument $1 (see --help)" ;;
    esac
    shift
done

need_root
# SERVICE_USER, INSTALL_PREFIX, ... from daemon/targets/<profile>.yaml.
PROFILE_VARS="$(PYTHONPATH="$REPO" "$PYTHON" -m board.profile "$PROFILE" --shell)" ||
    die "cannot read profile $PROFILE ($PYTHON needs yaml: apt-get install python3-yaml)"
eval "$PROFILE_VARS"
[[ -n $SERVICE_USER ]] || die "profile $PROFILE is not a board profile"

((DRY_RUN)) && note "dry run: nothing is changed"
note "profile $PROFILE_NAME, root $ROOT"

# ---------------------------------------------------------------- systemd
installed=()
for u in "${UNITS[@]}"; do
    [[ -f $(r "/etc/systemd/system/$u") ]] && installed+=("$u")
done
if ((${#installed[@]})); then
    if [[ $ROOT == / ]]; then
        run systemctl disable --now "${installed[@]}"
    else
        run systemctl "--root=$ROOT" disable "${installed[@]}"
    fi
    for u in "${installed[@]}"; do run rm -f "$(r "/etc/systemd/system/$u")"; done
fi
for kind in sysusers tmpfiles; do
    f="$(r "/etc/$kind.d/hexvoice.conf")"
    [[ -f $f ]] && run rm -f "$f"
done
if ((${#installed[@]})) && [[ $ROOT == / ]]; then
    run systemctl daemon-reload
fi

# ---------------------------------------------------------------- programs
link="$(r /usr/local/bin/hexvoice)"
if [[ -L $link && $(readlink "$link") == "$INSTALL_PREFIX"/* ]]; then
    run rm -f "$link"
fi
for d in "$INSTALL_PREFIX/venv" "$INSTALL_PREFIX/qnn"; do
    [[ -e $(r "$d") ]] && run rm -rf "$(r "$d")"
done
if [[ -d $(r "$INSTALL_PREFIX") ]]; then
    left="$(find "$(r "$INSTALL_PREFIX")" -mindepth 1 -maxdepth 1 \
        -not -path "$(r "$INSTALL_PREFIX/venv")" \
        -not -path "$(r "$INSTALL_PREFIX/qnn")" -printf '%f ')"
    if [[ -z $left ]]; then
        run rmdir "$(r "$INSTALL_PREFIX")"
    else
        note "kept $INSTALL_PREFIX: it also holds $left"
    fi
fi

# ---------------------------------------------------------------- config, user, data
if ((PURGE)); then
    [[ -d $(r "$CONF_DIR") ]] && run rm -rf "$(r "$CONF_DIR")"
    if has_user "$SERVICE_USER"; then
        PREFIX_ARGS=()
        [[ $ROOT == / ]] || PREFIX_ARGS=(--prefix "$ROOT")
        run userdel "${PREFIX_ARGS[@]}" "$SERVICE_USER"
    fi
else
    note "kept $CONF_DIR and user $SERVICE_USER (--purge removes them)"
fi
note "kept $STATE_DIR (voices and other user data; remove it by hand if wanted)"
