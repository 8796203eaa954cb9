#!/bin/sh
# Installs this release of lobby-display into /opt/lobby-display (its own venv, every
# dependency at the version of requirements.lock), then, given a screen's name and options, sets
# that screen up with `lobby-display install` (see docs/deployment.md). As root:
#
#   sh install.sh                                    # the program only (or update it)
#   sh install.sh hall --config hall.toml --credentials service-account.json
#   sh install.sh --wheels DIR hall --config ...     # offline: only the wheels in DIR
#   sh install.sh --build-wheels DIR                 # on a connected machine: make those wheels
#
# Run it from the release (a tarball's directory or a checkout). --prefix DIR installs elsewhere
# (the units start /opt/lobby-display/.venv/bin/lobby-display: keep the default on a screen).
set -eu

prefix=/opt/lobby-display
wheels=""
build_wheels=""
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="$2"; shift 2 ;;
        --wheels) wheels="$2"; shift 2 ;;
        --build-wheels) build_wheels="$2"; shift 2 ;;
        -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) break ;;
    esac
done

release=$(cd "$(dirname "$0")" && pwd)
fail() { echo "install.sh: $*" >&2; exit 1; }
[ -f "$release/pyproject.toml" ] && [ -f "$release/requirements.lock" ] \
    || fail "$release is not a lobby-display release (no pyproject.toml or requirements.lock)"
version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$release/src/lobby_display/__init__.py")
[ -n "$version" ] || fail "no __version__ in $release/src/lobby_display/__init__.py"

if [ -n "$build_wheels" ]; then
    # Everything a screen needs, built or downloaded here, for `--wheels` on a machine without
    # access to the package index (same Debian and Python version).
    python3 -m pip wheel --quiet -c "$release/requirements.lock" -w "$build_wheels" "$release"
    echo "wheels of lobby-display $version and its dependencies in $build_wheels"
    exit 0
fi

python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || fail "needs Python 3.11 or later (Debian 12's python3)"
if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    command -v apt-get >/dev/null || fail "python3's venv module is missing (package python3-venv)"
    echo "installing python3-venv (python3's venv module)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3-venv \
        || fail "could not install python3-venv (apt-get update, then try again)"
fi

# The release's files beside the venv: the units and foot.ini `lobby-display install` copies,
# the example config, the docs and the lock.
install -d -m 0755 "$prefix"
if [ "$(cd "$prefix" && pwd)" != "$release" ]; then
    for item in pyproject.toml requirements.lock README.md LICENSE config.example.toml install.sh; do
        install -m 0644 "$release/$item" "$prefix/$item"
    done
    chmod 0755 "$prefix/install.sh"
    for directory in src systemd docs; do
        rm -rf "${prefix:?}/$directory"
        cp -R "$release/$directory" "$prefix/$directory"
    done
    find "$prefix/src" -name __pycache__ -type d -prune -exec rm -rf {} +
fi

[ -x "$prefix/.venv/bin/python" ] || python3 -m venv "$prefix/.venv"
pip="$prefix/.venv/bin/python -m pip"
if [ -n "$wheels" ]; then
    [ -d "$wheels" ] || fail "$wheels is not a directory of wheels"
    # Offline: nothing but the wheels in $wheels, at the lock's versions.
    $pip install --quiet --no-index --find-links "$wheels" --force-reinstall \
        -c "$prefix/requirements.lock" "lobby-display==$version" \
        || fail "the wheels in $wheels do not hold lobby-display $version and its dependencies (make them with --build-wheels)"
else
    $pip install --quiet -c "$prefix/requirements.lock" "$prefix" \
        || fail "pip could not install lobby-display (no access to the package index? use --wheels)"
fi
chmod -R go-w "$prefix"
"$prefix/.venv/bin/lobby-display" --version

if [ $# -gt 0 ]; then
    exec "$prefix/.venv/bin/lobby-display" install "$@"
fi
