#!/usr/bin/env bash
# Build the peers' environments for benchmarks/peers/run_peers.py (idempotent).
#
#   bash benchmarks/peers/setup.sh            # install what is missing
#   FORCE=1 bash benchmarks/peers/setup.sh    # reinstall every peer
#   PYTHON=python3.11 bash benchmarks/peers/setup.sh
#
# Layout (all under benchmarks/.peers/, which is gitignored):
#   venv/                 python3 venv: numpy<2 (pinned), gaoya, datasketch (+ scipy), rensa,
#                         pyarrow (parquet shards), pybind11 build deps
#   datatrove-venv/       datatrove (needs numpy >= 2, so it cannot share venv/), with
#                         pyarrow (its ParquetReader), spacy (its English word tokeniser:
#                         spacy.blank("en"), no model download) and xxhash (its hash)
#   lib/simhash_pure/     `simhash` 2.1.2   (pure Python; import name `simhash`)
#   lib/python_simhash/   `python-simhash`  (Rust;        import name `simhash`)
#   lib/simhash_pybind/   `simhash-pybind`  (C++;         import name `simhash`)
#   status.json           per-peer install status, read by run_peers.py
#   setup.log             full pip output
#
# Three of the four peers install a top-level package called `simhash`, so they
# cannot share one site-packages: each goes into its own --target directory and
# run_peers.py runs every peer in its own child process with that directory first
# on sys.path.
#
# A peer that fails to install does not stop the script: its reason is written to
# status.json and run_peers.py reports it as "unavailable: <reason>".
set -u -o pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PEERS="$ROOT/benchmarks/.peers"
VENV="$PEERS/venv"
LIB="$PEERS/lib"
LOG="$PEERS/setup.log"
PYTHON="${PYTHON:-python3}"
FORCE="${FORCE:-0}"

# ---- pinned versions -------------------------------------------------------
NUMPY_PIN="numpy==1.26.4"         # < 2: `simhash` 2.1.2 overflows on numpy >= 2
GAOYA_PIN="gaoya==0.2.2"
DATASKETCH_PIN="datasketch==2.0.0"  # MinHash + MinHashLSH (pure Python + numpy)
SCIPY_PIN="scipy==1.14.1"           # datasketch's one dependency besides numpy; supports numpy 1.26
PYSIMHASH_PIN="python-simhash==0.1.0"
PYBIND_PEER_PIN="simhash-pybind==0.0.3"   # sdist only: compiled here with c++
PURE_PIN="simhash==2.1.2"
RENSA_PIN="rensa==0.5.0"            # Rust MinHash + LSH (abi3 wheel)
PYARROW_PIN="pyarrow==18.1.0"       # parquet shards (bench_out_of_core); works with numpy 1.26
# datatrove's own venv (datatrove 0.10.1 requires numpy >= 2.0)
DT_VENV="$PEERS/datatrove-venv"
DT_PINS=("datatrove==0.10.1" "numpy==2.4.6" "pyarrow==26.0.1" "spacy==3.8.18" "xxhash==3.8.2" "regex==2026.11.19"
         "tokenizers==0.23.3" "orjson==3.13.0")  # regex, tokenizers: imported by datatrove.pipeline.dedup; orjson: its JsonlWriter
BUILD_PINS=("pybind11==2.13.6" "setuptools==75.8.0" "wheel==0.45.1")

mkdir -p "$PEERS" "$LIB"
: >"$LOG"
declare -A REASON=()

log() { echo "[peers-setup] $*" >&2; }

pip_in() {  # pip in the venv, output to the log; returns pip's status
    "$VENV/bin/python" -m pip --disable-pip-version-check "$@" >>"$LOG" 2>&1
}

last_error() {  # most telling line of this step's pip output (compiler errors first)
    local out line
    out="$(sed -n "$1,\$p" "$LOG")"
    line="$(echo "$out" | grep -E 'fatal error|error: command|error: ' | grep -v 'subprocess-exited-with-error' | tail -n 1)"
    [ -n "$line" ] || line="$(echo "$out" | grep -E 'ERROR:' | grep -v 'Location' | tail -n 1)"
    [ -n "$line" ] || line="$(echo "$out" | tail -n 1)"
    echo "$line" | sed 's/^ *//' | cut -c1-300
}

# ---- venv --------------------------------------------------------------------
if [ "$FORCE" = 1 ] || ! "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
    log "creating $VENV with $PYTHON"
    rm -rf "$VENV"
    if ! "$PYTHON" -m venv "$VENV" >>"$LOG" 2>&1; then
        log "FAILED to create venv with $PYTHON (see $LOG)"
        exit 1
    fi
fi
log "venv: $("$VENV/bin/python" -V 2>&1)"

# ---- packages that go into the venv itself ----------------------------------
have_dist() {  # have_dist NAME VERSION: is exactly that version installed in the venv?
    "$VENV/bin/python" - "$1" "$2" <<'EOF' >/dev/null 2>&1
import sys
from importlib.metadata import version
sys.exit(0 if version(sys.argv[1]) == sys.argv[2] else 1)
EOF
}

install_venv_pkg() {  # install_venv_pkg KEY PIN
    local key="$1" pin="$2" name="${2%%==*}" ver="${2##*==}"
    if [ "$FORCE" != 1 ] && have_dist "$name" "$ver"; then
        log "$pin already installed"
        return 0
    fi
    log "installing $pin"
    local from=$(($(wc -l <"$LOG") + 1))
    if ! pip_in install "$pin"; then
        REASON[$key]="pip install $pin failed: $(last_error "$from")"
        log "${REASON[$key]}"
        return 1
    fi
}

install_venv_pkg numpy "$NUMPY_PIN"
install_venv_pkg gaoya "$GAOYA_PIN"
install_venv_pkg scipy "$SCIPY_PIN" && install_venv_pkg datasketch "$DATASKETCH_PIN"
for pin in "${BUILD_PINS[@]}"; do install_venv_pkg build "$pin"; done
install_venv_pkg rensa "$RENSA_PIN"
install_venv_pkg pyarrow "$PYARROW_PIN"

# ---- datatrove: a venv of its own (numpy >= 2) ------------------------------
have_dt_pins() {  # is every DT_PINS version installed in the datatrove venv?
    "$DT_VENV/bin/python" - "${DT_PINS[@]}" <<'EOF' >/dev/null 2>&1
import sys
from importlib.metadata import version
sys.exit(0 if all(version(p.split("==")[0]) == p.split("==")[1] for p in sys.argv[1:]) else 1)
EOF
}

install_datatrove() {
    if [ "$FORCE" = 1 ] || ! "$DT_VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
        log "creating $DT_VENV with $PYTHON"
        rm -rf "$DT_VENV"
        if ! "$PYTHON" -m venv "$DT_VENV" >>"$LOG" 2>&1; then
            REASON[datatrove]="could not create $DT_VENV with $PYTHON"
            log "${REASON[datatrove]}"
            return 1
        fi
    fi
    if [ "$FORCE" != 1 ] && have_dt_pins; then
        log "${DT_PINS[*]} already installed"
        return 0
    fi
    log "installing ${DT_PINS[*]} into $DT_VENV"
    local from=$(($(wc -l <"$LOG") + 1))
    if ! "$DT_VENV/bin/python" -m pip --disable-pip-version-check install "${DT_PINS[@]}" \
            >>"$LOG" 2>&1; then
        REASON[datatrove]="pip install ${DT_PINS[*]} failed: $(last_error "$from")"
        log "${REASON[datatrove]}"
        return 1
    fi
}
install_datatrove

# ---- packages that each need their own --target ------------------------------
install_target() {  # install_target KEY DIR PIN [extra pip args...]
    local key="$1" dir="$LIB/$2" pin="$3"
    shift 3
    local marker="$dir/.installed-${pin//=/-}"
    if [ "$FORCE" != 1 ] && [ -f "$marker" ]; then
        log "$pin already in $dir"
        return 0
    fi
    log "installing $pin into $dir"
    local tmp="$dir.tmp.$$"
    rm -rf "$tmp"
    local from=$(($(wc -l <"$LOG") + 1))
    if pip_in install --no-deps --no-compile --target "$tmp" "$@" "$pin"; then
        rm -rf "$dir" && mv "$tmp" "$dir" && touch "$marker"
    else
        rm -rf "$tmp"
        REASON[$key]="pip install $pin failed: $(last_error "$from")"
        log "${REASON[$key]}"
        return 1
    fi
}

install_target python_simhash python_simhash "$PYSIMHASH_PIN" --only-binary=:all:
install_target simhash_pure simhash_pure "$PURE_PIN"

# simhash-pybind ships only an sdist: it needs a C++ compiler and Python headers.
if ! command -v c++ >/dev/null 2>&1 && ! command -v g++ >/dev/null 2>&1; then
    REASON[simhash_pybind]="no C++ compiler (c++/g++) to build the simhash-pybind sdist; apt-get install g++"
    log "${REASON[simhash_pybind]}"
elif [ -n "${REASON[build]:-}" ]; then
    REASON[simhash_pybind]="build dependencies missing: ${REASON[build]}"
    log "${REASON[simhash_pybind]}"
else
    install_target simhash_pybind simhash_pybind "$PYBIND_PEER_PIN" --no-build-isolation --no-binary=simhash-pybind
fi

# ---- record failures, then import-check every peer into status.json ----------
[ -n "${REASON[numpy]:-}" ] && REASON[simhash_pure]="${REASON[simhash_pure]:-needs numpy<2: ${REASON[numpy]}}"
[ -n "${REASON[scipy]:-}" ] && REASON[datasketch]="${REASON[datasketch]:-needs scipy: ${REASON[scipy]}}"
for key in gaoya python_simhash simhash_pybind simhash_pure datasketch rensa datatrove; do
    if [ -n "${REASON[$key]:-}" ]; then
        printf '%s\n' "${REASON[$key]}" >"$PEERS/failed-$key.txt"
    else
        rm -f "$PEERS/failed-$key.txt"
    fi
done
"$VENV/bin/python" "$HERE/run_peers.py" --write-status "$PEERS/status.json" >&2
rc=$?
log "status written to $PEERS/status.json (pip log: $LOG)"
exit $rc
