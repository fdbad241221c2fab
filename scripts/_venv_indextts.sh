# shellcheck shell=bash
# Shared by scripts/test: create $VENV_IDX (.venv-indextts) once, for
# packages/hexvoice-indextts and its parity oracle, upstream IndexTTS-2's own
# inference code (indextts2-inference).  It cannot share .venv: upstream needs
# transformers>=5 while hexvoice's oracle extra pins transformers==4.57.6.
# The install is skipped when the venv holds a stamp for both pyproject.toml
# files, the pins below and this interpreter (both projects are editable).
#
# torchaudio: upstream imports it and uses only pure-PyTorch parts of it
# (transforms.Resample, compliance.kaldi.fbank, functional._hz_to_mel;
# torchaudio.save only when infer is given an output path).  Every PyPI
# torchaudio pins the torch it was built with and is CUDA-linked; the newest,
# 2.11.1, has no torch 2.13.0 to match.  A matching pair means a CUDA torch of
# several GB, so torchaudio 2.11.1 is installed with --no-deps next to the
# machine's CPU torch 2.13.0 and its compiled extension (CUDA-linked, fails to
# load on torch-cpu) is deleted: torchaudio then imports without it and the
# parts upstream uses run.  For the same reason indextts2-inference itself is
# installed with --no-deps (its torchaudio requirement would pull a CUDA torch);
# the package's [oracle] extra lists its other requirements.
set -euo pipefail
# shellcheck source=scripts/_venv.sh
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
# _venv.sh's helpers act on $VENV (hexvoice's own venv); they are called here
# with VENV=$VENV_IDX for the call only, so a caller keeps both.
VENV_IDX="${HEXVOICE_INDEXTTS_VENV:-$ROOT/.venv-indextts}"
IDX_PKG="$ROOT/packages/hexvoice-indextts"
# hexvoice's extras for building and simulating graphs (not oracle: 4.57.6).
IDX_HEXVOICE_EXTRAS="sim,export"
IDX_NODEPS=(indextts2-inference==2.1.1 torchaudio==2.11.1)

_idx_key() {
    { cat "$ROOT/pyproject.toml" "$IDX_PKG/pyproject.toml"; echo "$IDX_HEXVOICE_EXTRAS"
      echo "$ROOT"; "$VENV_IDX/bin/python" -VV; echo "${IDX_NODEPS[*]}"; } |
        sha256sum | cut -d' ' -f1
}

# Every step returns on failure by itself: scripts/test calls this in an `if`,
# where set -e does not act.
indextts_venv() {
    local stamp="$VENV_IDX/.hexvoice-indextts-installed"
    local t0 key site
    if [[ ! -x "$VENV_IDX/bin/python" ]]; then
        t0=$EPOCHREALTIME
        _hexvoice_say "creating $VENV_IDX ($("$PYTHON" -V 2>&1)) and upgrading pip"
        "$PYTHON" -m venv "$VENV_IDX" || return 1
        "$VENV_IDX/bin/python" -m pip install --quiet --upgrade pip || return 1
        _hexvoice_say "venv ready in $(_hexvoice_since "$t0") s"
    fi
    key="$(_idx_key)" || return 1
    if [[ -f "$stamp" && "$(<"$stamp")" == "$key" ]]; then
        _hexvoice_say "hexvoice-indextts[oracle] is installed in $VENV_IDX (delete" \
            "$stamp to force a reinstall)"
        return 0
    fi
    rm -f "$stamp"
    t0=$EPOCHREALTIME
    _hexvoice_say "installing hexvoice[$IDX_HEXVOICE_EXTRAS] and hexvoice-indextts[oracle]" \
        "(editable) into $VENV_IDX; the first time this takes minutes"
    VENV="$VENV_IDX" _hexvoice_pip --editable "${ROOT}[$IDX_HEXVOICE_EXTRAS]" \
        --editable "${IDX_PKG}[oracle]" || return 1
    _hexvoice_say "done in $(_hexvoice_since "$t0") s"
    t0=$EPOCHREALTIME
    _hexvoice_say "installing ${IDX_NODEPS[*]} with --no-deps (see scripts/_venv_indextts.sh)"
    VENV="$VENV_IDX" _hexvoice_log=pip-install-nodeps.log _hexvoice_pip --no-deps "${IDX_NODEPS[@]}" ||
        return 1
    site="$("$VENV_IDX/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" ||
        return 1
    rm -f "$site"/torchaudio/lib/*.so || return 1
    "$VENV_IDX/bin/python" -c 'import torchaudio.compliance.kaldi, indextts.infer_v2' ||
        { _hexvoice_say "upstream does not import in $VENV_IDX"; return 1; }
    _hexvoice_say "done in $(_hexvoice_since "$t0") s"
    # Two caches upstream fills on first use, inside the venv, built here to
    # keep them out of test time: nemo-text-processing compiles upstream's
    # English and Chinese text-normaliser grammars (about 70 s and 10 s on 2
    # cores) into the installed indextts package, and librosa's numba
    # functions compile into
    # librosa's __pycache__ when librosa.util.utils is first imported (lazily,
    # by librosa.load: about 28 s; the first test run in a fresh venv took
    # 110 s instead of 60 s without this, three processes compiling at once).
    t0=$EPOCHREALTIME
    _hexvoice_say "building upstream's text-normaliser grammars and librosa's numba caches"
    "$VENV_IDX/bin/python" -c 'import librosa.util.utils, indextts.infer_v2
from indextts.utils.front import TextNormalizer
TextNormalizer().load()' >"$VENV_IDX/warm-caches.log" 2>&1 ||
        { tail -n 25 "$VENV_IDX/warm-caches.log" >&2; return 1; }
    _hexvoice_say "done in $(_hexvoice_since "$t0") s"
    printf '%s\n' "$key" >"$stamp"
}
