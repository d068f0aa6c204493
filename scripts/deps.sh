#!/usr/bin/env bash
# scripts/deps.sh — installs what specgen needs on a fresh Debian machine: the Debian
# packages in deps/apt.txt (skipping those present) and the Python packages in
# deps/pip.txt into .venv/ (used by the interop tests). Run as root (or with sudo).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
missing=()
while read -r pkg extra _; do
    [ -z "$pkg" ] || [ "${pkg#\#}" != "$pkg" ] && continue
    # "PKG cmd=NAME": skip PKG when NAME is already on PATH from elsewhere (a kubectl from
    # another package would collide with Debian's over /usr/bin/kubectl).
    case "$extra" in cmd=*) command -v "${extra#cmd=}" >/dev/null 2>&1 && continue ;; esac
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done < deps/apt.txt
if [ ${#missing[@]} -gt 0 ]; then
    echo "deps: installing Debian packages: ${missing[*]}"
    SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
    echo "deps: Debian packages present"
fi
if grep -qvE '^\s*(#|$)' deps/pip.txt 2>/dev/null; then
    if [ ! -x .venv/bin/python ]; then python3 -m venv .venv; fi
    # Stamp on the list's content, so an unchanged list costs nothing on the next run.
    stamp=.venv/.deps-$(sha256sum deps/pip.txt | cut -c1-16)
    if [ ! -f "$stamp" ]; then
        echo "deps: installing Python packages into .venv (deps/pip.txt)"
        .venv/bin/pip install -q --disable-pip-version-check -r deps/pip.txt
        rm -f .venv/.deps-*; touch "$stamp"
    else
        echo "deps: Python packages present (.venv)"
    fi
fi
