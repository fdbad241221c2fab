#!/usr/bin/env bash
# Set hexvoice up on a board.  Idempotent: re-run it to repair or upgrade.
#
#   sudo board/install.sh --qairt DIR [--profile qcs8550] [--group NAME]
#                         [--python python3] [--dry-run] [--root DIR]
#
#   --qairt DIR   QAIRT SDK root (has lib/<flavour>/ and lib/hexagon-v73/unsigned/);
#                 needed the first time, optional later (keeps the installed libs)
#   --group NAME  FastRPC device group (default: the device node's, else the profile's)
#   --dry-run     print every action, change nothing
#   --root DIR    act on a tree under DIR instead of / (packaging and tests)
#
# Steps: service user in the device group -> /opt/hexvoice/venv with hexvoice ->
# QNN host libs + V73 skel -> /etc/hexvoice (config, service environment) ->
# systemd units, sysusers/tmpfiles -> enable -> `hexvoice doctor` as the service
# user.  Board facts come from daemon/targets/<profile>.yaml
# (one source of truth).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROFILE=qcs8550
PYTHON=python3
QAIRT=""
GROUP=""
DRY_RUN=0
ROOT=/
STATE_DIR=/var/lib/hexvoice
CONF_DIR=/etc/hexvoice
ENV_FILE=$CONF_DIR/hexvoice.env
MARKER=hexvoice-qnn.yaml # read by `hexvoice doctor` (board/qnn_checks.py)
UNITS=(hexvoice.socket hexvoice.service)

PROG=install.sh
# shellcheck source=board/_common.sh
source "$REPO/board/_common.sh"
# Write stdin to a file as one action.
write() {
    local dest="$1" content line
    content="$(cat)"
    echo "+ write $dest:"
    while IFS= read -r line; do echo "|   $line"; done <<<"$content"
    if ((!DRY_RUN)); then printf '%s\n' "$content" >"$dest"; fi
}
# Copy with mode unless the destination is already identical.
copy() {
    local mode="$1" src="$2" dest="$3"
    if cmp -s "$src" "$dest"; then
        note "up to date: $dest"
    else
        run install -m "$mode" "$src" "$dest"
    fi
}
r() { echo "${ROOT%/}$1"; } # a board path inside --root
declare -A MADE=()
# Create a directory once (a dry run remembers what it would have made).
ensure_dir() {
    local mode="$1" dir="$2"
    shift 2
    if [[ ! -d $dir && -z ${MADE[$dir]:-} ]]; then
        run install -d -m "$mode" "$@" "$dir"
        MADE[$dir]=1
    fi
}

# passwd/group lookups in the target tree (NSS on the live system).
db_line() {
    if [[ $ROOT == / ]]; then
        getent "$1" "$2" || true
    elif [[ -f $ROOT/etc/$1 ]]; then
        awk -F: -v k="$2" '$1 == k || $3 == k' "$ROOT/etc/$1"
    fi
}
is_member() { db_line group "$1" | cut -d: -f4 | tr ',' '\n' | grep -qx "$2"; }

while (($#)); do
    case "$1" in
    --qairt) : "${2:?--qairt needs a directory}"; QAIRT="$(realpath -m "$2")" && shift ;;
    --profile) PROFILE="${2:?--profile needs a name}" && shift ;;
    --group) GROUP="${2:?--group needs a name}" && shift ;;
    --python) PYTHON="${2:?--python needs an interpreter}" && shift ;;
    --root) : "${2:?--root needs a directory}"; ROOT="$(realpath -m "$2")" && shift ;;
    --dry-run) DRY_RUN=1 ;;
    -h | --help) usage ;;
    *) die "unknown argument $1 (see --help)" ;;
    esac
    shift
done

need_root
"$PYTHON" -c 'import venv, ensurepip, yaml' 2>/dev/null ||
    die "$PYTHON needs venv, ensurepip and yaml: sudo apt-get install python3-venv python3-yaml"
# The profile's variables: QNN_FLAVOUR, QNN_LIB_DIR, QNN_DSP_DIR, HTP_ARCH, HOST_LIBS,
# SKEL_LIBS, DEVICE_NODES, DEVICE_GROUP, SERVICE_USER, INSTALL_PREFIX.
PROFILE_VARS="$(PYTHONPATH="$REPO" "$PYTHON" -m board.profile "$PROFILE" --shell)" ||
    die "cannot read profile $PROFILE"
eval "$PROFILE_VARS"
[[ -n $SERVICE_USER && -n $QNN_LIB_DIR ]] || die "profile $PROFILE is not a board profile"
VENV=$INSTALL_PREFIX/venv

((DRY_RUN)) && note "dry run: nothing is changed"
note "profile $PROFILE_NAME, root $ROOT, repo $REPO"

# ---------------------------------------------------------------- check inputs first
QNN_SRC="" SKEL_SRC=""
if [[ -n $QAIRT ]]; then
    QNN_SRC="$QAIRT/lib/$QNN_FLAVOUR"
    SKEL_SRC="$QAIRT/lib/hexagon-v$HTP_ARCH/unsigned"
    [[ -d $QNN_SRC ]] || die "$QNN_SRC not found ($PROFILE_NAME needs lib/$QNN_FLAVOUR;" \
        "this SDK has: $(find "$QAIRT/lib" -mindepth 1 -maxdepth 1 -printf '%f ' 2>/dev/null))"
    for f in "${HOST_LIBS[@]}"; do
        [[ -f $QNN_SRC/$f ]] || die "$QNN_SRC/$f missing (wrong SDK or flavour?)"
    done
    for f in "${SKEL_LIBS[@]}"; do
        [[ -f $SKEL_SRC/$f ]] || die "$SKEL_SRC/$f missing"
    done
elif [[ ! -f $(r "$QNN_LIB_DIR")/${HOST_LIBS[0]} ]]; then
    die "no QNN libraries installed yet: pass --qairt <QAIRT SDK dir>"
fi
if [[ -z $GROUP ]]; then
    for pattern in "${DEVICE_NODES[@]}"; do
        node="$(compgen -G "$(r "$pattern")" | head -n1 || true)"
        if [[ -n $node ]]; then
            GROUP="$(db_line group "$(stat -c %g "$node")" | cut -d: -f1)"
            break
        fi
    done
    GROUP="${GROUP:-$DEVICE_GROUP}"
fi
[[ -n $(db_line group "$GROUP") ]] ||
    die "group $GROUP does not exist (the FastRPC device node's group; see --group)"

# ---------------------------------------------------------------- service user
PREFIX_ARGS=()
[[ $ROOT == / ]] || PREFIX_ARGS=(--prefix "$ROOT")
if [[ -z $(db_line passwd "$SERVICE_USER") ]]; then
    # Its own group may be left over (a sysusers "g" line, an earlier uninstall).
    OWN_GROUP=(--user-group)
    [[ -n $(db_line group "$SERVICE_USER") ]] && OWN_GROUP=(--gid "$SERVICE_USER")
    run useradd "${PREFIX_ARGS[@]}" --system "${OWN_GROUP[@]}" --no-create-home \
        --home-dir "$STATE_DIR" --shell /usr/sbin/nologin --groups "$GROUP" "$SERVICE_USER"
elif ! is_member "$GROUP" "$SERVICE_USER"; then
    run usermod "${PREFIX_ARGS[@]}" -aG "$GROUP" "$SERVICE_USER"
else
    note "user $SERVICE_USER exists and is in group $GROUP"
fi
OWNER=()
[[ $ROOT == / ]] && OWNER=(-o "$SERVICE_USER" -g "$SERVICE_USER")
for d in "$INSTALL_PREFIX" "$CONF_DIR" /usr/local/bin; do ensure_dir 0755 "$(r "$d")"; done
for d in "$STATE_DIR" "$STATE_DIR/voices"; do ensure_dir 0750 "$(r "$d")" "${OWNER[@]}"; done

# ---------------------------------------------------------------- venv + hexvoice
if [[ -x $(r "$VENV")/bin/python ]]; then
    note "venv $VENV exists"
else
    run "$PYTHON" -m venv "$(r "$VENV")"
fi
# A local directory is always rebuilt and reinstalled: this picks up code changes.
run "$(r "$VENV")/bin/python" -m pip install --quiet "$REPO"
if [[ $(readlink "$(r /usr/local/bin/hexvoice)" 2>/dev/null) != "$VENV/bin/hexvoice" ]]; then
    run ln -sfn "$VENV/bin/hexvoice" "$(r /usr/local/bin/hexvoice)"
fi

# ---------------------------------------------------------------- QNN runtime
if [[ -n $QAIRT ]]; then
    for d in "$QNN_LIB_DIR" "$QNN_DSP_DIR"; do ensure_dir 0755 "$(r "$d")"; done
    for f in "${HOST_LIBS[@]}"; do copy 0644 "$QNN_SRC/$f" "$(r "$QNN_LIB_DIR")/$f"; done
    for f in "${SKEL_LIBS[@]}"; do copy 0644 "$SKEL_SRC/$f" "$(r "$QNN_DSP_DIR")/$f"; done
    # The signed-skel catalog ships with newer SDKs only.
    cat_file="$SKEL_SRC/libqnnhtpv$HTP_ARCH.cat"
    [[ -f $cat_file ]] && copy 0644 "$cat_file" "$(r "$QNN_DSP_DIR")/${cat_file##*/}"
    marker="flavour: $QNN_FLAVOUR
qairt: $QAIRT"
    if [[ $(cat "$(r "$QNN_LIB_DIR")/$MARKER" 2>/dev/null) != "$marker" ]]; then
        write "$(r "$QNN_LIB_DIR")/$MARKER" <<<"$marker"
    fi
else
    note "no --qairt: keeping the QNN libraries in $QNN_LIB_DIR"
fi

# ---------------------------------------------------------------- configuration
if [[ -f $(r "$ENV_FILE") ]]; then
    note "kept $ENV_FILE (edits preserved)"
else
    PYTHONPATH="$REPO" "$PYTHON" -m board.profile "$PROFILE" --env | write "$(r "$ENV_FILE")"
fi
if [[ ! -f $REPO/systemd/config.yaml ]]; then
    note "skipped config: systemd/config.yaml is not in this checkout"
elif [[ -f $(r "$CONF_DIR/config.yaml") ]]; then
    note "kept $CONF_DIR/config.yaml (edits preserved)"
else
    run install -m 0644 "$REPO/systemd/config.yaml" "$(r "$CONF_DIR/config.yaml")"
fi

# ---------------------------------------------------------------- systemd
SYSTEMCTL=(systemctl)
[[ $ROOT == / ]] || SYSTEMCTL=(systemctl "--root=$ROOT")
present=()
for u in "${UNITS[@]}"; do
    if [[ -f $REPO/systemd/$u ]]; then
        ensure_dir 0755 "$(r /etc/systemd/system)"
        copy 0644 "$REPO/systemd/$u" "$(r "/etc/systemd/system/$u")"
        present+=("$u")
    else
        note "skipped unit: systemd/$u is not in this checkout"
    fi
done
for kind in sysusers tmpfiles; do
    src="$REPO/systemd/hexvoice.$kind"
    dest="/etc/$kind.d/hexvoice.conf"
    if [[ ! -f $src ]]; then
        note "skipped $kind: systemd/hexvoice.$kind is not in this checkout"
        continue
    fi
    ensure_dir 0755 "$(r "/etc/$kind.d")"
    copy 0644 "$src" "$(r "$dest")"
    # A config file named on the command line is not looked up under --root.
    if [[ $kind == sysusers ]]; then
        run systemd-sysusers "--root=$ROOT" "$(r "$dest")"
    else
        run systemd-tmpfiles "--root=$ROOT" --create "$(r "$dest")"
    fi
done
if ((${#present[@]})); then
    [[ $ROOT == / ]] && run systemctl daemon-reload
    run "${SYSTEMCTL[@]}" enable "${present[@]}"
fi

# ---------------------------------------------------------------- preflight
# As the service user, with the service's environment: what the service will meet.
DOCTOR=("$(r "$VENV")/bin/hexvoice" doctor --profile "$PROFILE")
[[ $ROOT == / ]] || DOCTOR+=(--root "$ROOT")
# shellcheck disable=SC2016 # expanded by the inner shell
SOURCED=(bash -c 'set -a; . "$1"; set +a; shift; exec "$@"' env "$(r "$ENV_FILE")")
if [[ $ROOT == / ]]; then
    SOURCED=(runuser -u "$SERVICE_USER" -- "${SOURCED[@]}")
fi
if ((DRY_RUN)); then
    run "${SOURCED[@]}" "${DOCTOR[@]}"
    exit 0
fi
status=0
run "${SOURCED[@]}" "${DOCTOR[@]}" || status=$?
if ((status)); then
    note "doctor found errors: fix them, then re-run board/install.sh" \
        "or start the service by hand (systemctl start hexvoice.socket)"
elif [[ $ROOT == / ]] && ((${#present[@]})); then
    run systemctl restart "${present[@]}"
fi
exit "$status"
