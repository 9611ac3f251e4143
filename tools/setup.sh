#!/bin/sh
# Idempotent set-up: Debian packages, then .venv with tools/requirements.txt.
# Fast (well under 2 s) and one line of output when everything is in place;
# otherwise one line per step it takes, and the full log of a step that fails.
# `setup.sh packages` does the first half only, `setup.sh venv` the second
# (make test runs the .venv's installation beside the C compilation).
# `setup.sh test-packages` is `packages` plus what only the tests need (a
# browser for the HTML pages' tests): make test runs it, make run does not.
# `setup.sh lab-packages` is `packages` plus LAVA's dispatcher for make test-lab
# (lava-run on this machine), unpacked into .venv/lava (after `venv`: a .venv
# made anew starts without it).
set -eu

PART=${1:-all}
case "$PART" in
    all|packages|test-packages|lab-packages|venv) ;;
    *) echo "setup: unknown part '$PART'; choose packages, test-packages, lab-packages, venv, or nothing for packages and venv" >&2; exit 2 ;;
esac

ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV="$ROOT/.venv"
REQ="$ROOT/tools/requirements.txt"
STAMP="$VENV/.cleanroom-requirements.sha256"

# Build: nasm, cross gcc/binutils and the cross C library (unit tests and
# the hosted build link against it; apt only recommends it); the host's own
# gcc, its C library (static libc.a; gcc only recommends libc6-dev) and
# Boost.Context (libboost-context-dev: the static libboost_context.a) for
# the 64-bit peers helper. ISO: grub-mkrescue and the GRUB platforms
# it packs, xorriso, mtools. Emulators: QEMU, OVMF, Bochs with its BIOSes and
# term display. Host tool: python3 with venv; taskset (util-linux) pins hosted runs.
# (decode-photos reads QR codes with zxing-cpp, a wheel in .venv: no Debian package.)
# lava-common is LAVA's job schema (lava-job checks every job with it; it brings
# python3-voluptuous).
PACKAGES="nasm gcc-i686-linux-gnu binutils-i686-linux-gnu libc6-dev-i386-cross
gcc libc6-dev libboost-context-dev
grub-common grub-pc-bin grub-efi-ia32-bin grub-efi-amd64-bin xorriso mtools
qemu-system-x86 ovmf bochs bochsbios vgabios bochs-term util-linux
python3 python3-venv lava-common"
# Tests only: a headless Chromium (or Chrome) loads the HTML pages the host tool writes
# (tests/browser.py drives it over its DevTools pipe: no driver, no Python package; it finds
# one by its names on PATH or in /snap/bin). Debian's chromium package is ~290 MB installed,
# 81 MB to download. Ubuntu has no such package (its chromium-browser only installs the snap):
# there the chromium snap, through snapd (browser_for_tests, below). DejaVu is the font the
# pages are laid out in, named here rather than left to one of the alternatives that
# fontconfig's package accepts.
OS_ID=$( (. /etc/os-release && echo "${ID:-}") 2>/dev/null || true)
if [ "$OS_ID" = ubuntu ]; then
    TEST_PACKAGES="fonts-dejavu-core"
else
    TEST_PACKAGES="chromium fonts-dejavu-core"
fi
if [ "$PART" = test-packages ]; then
    PACKAGES="$PACKAGES $TEST_PACKAGES"
fi
# The lab (make test-lab): LAVA's own dispatcher runs the jobs lava-job writes. Debian's lava-dispatcher
# brings 145 packages (libguestfs with its appliance, systemd, kernel headers for lava-dispatcher-host,
# NFS and TFTP servers): a worker's, for every kind of device. A QEMU job needs its Python code and what
# that imports: Debian's lava-dispatcher and lava-dispatcher-host of lava-common's version are
# downloaded and unpacked into .venv/lava (apt-get download, dpkg-deb -x; never installed), with the
# device-type templates of lava-server (only those: its server is not needed), and these Debian packages
# installed; libguestfs's binding is a stub (tools/lab/stubs). tools/lab/lava-run runs it.
LAB_PACKAGES="python3-configobj python3-jinja2 python3-magic python3-netifaces python3-pexpect python3-pyudev
python3-requests python3-setproctitle python3-tz python3-yaml"
LAB_DEBS="lava-dispatcher lava-dispatcher-host lava-server"
LAB_TEMPLATES="usr/share/lava-server/device-types"
if [ "$PART" = lab-packages ]; then
    PACKAGES="$PACKAGES $LAB_PACKAGES"
fi
# Debian's Python packages the .venv sees, and nothing else of Debian's dist-packages:
# LAVA's own schema code and the validator it is written in (not on PyPI as one package).
DEBIAN_PY="/usr/lib/python3/dist-packages"
DEBIAN_PY_PACKAGES="lava_common voluptuous"

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

LOG=$(mktemp "${TMPDIR:-/tmp}/cleanroom-setup.XXXXXX")
DEBS=  # lab-packages: where LAVA's packages are downloaded to
trap 'rm -f "$LOG"; [ -z "$DEBS" ] || rm -rf "$DEBS"' EXIT

# Run a step quietly; on failure show what it printed.
quiet() {
    if ! "$@" >"$LOG" 2>&1; then
        cat "$LOG" >&2
        die "failed: $*"
    fi
}

missing_packages() {
    # One dpkg call for the common case where everything is installed.
    # shellcheck disable=SC2086
    if dpkg -s $PACKAGES >/dev/null 2>&1; then
        return 0
    fi
    for p in $PACKAGES; do
        dpkg -s "$p" 2>/dev/null | grep -q '^Status: install ok installed' || printf '%s ' "$p"
    done
}

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        return 127
    fi
}

install_packages() {
    pkgs=$1
    if [ "$(id -u)" -ne 0 ] && ! command -v sudo >/dev/null 2>&1; then
        die "missing Debian packages: $pkgs
       install them as root: apt-get install $pkgs"
    fi
    say "installing Debian packages: $pkgs"
    quiet as_root apt-get update
    # shellcheck disable=SC2086
    quiet as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $pkgs
}

# The tests' browser, as tests/browser.py finds it (its path, or where it looked, in $LOG); on Ubuntu
# the chromium snap where there is none, or exactly what to install.
have_browser() { python3 "$ROOT/tests/browser.py" >"$LOG" 2>&1; }
browser_for_tests() {
    have_browser && return 0
    if [ "$OS_ID" = ubuntu ] && command -v snap >/dev/null 2>&1; then
        say "installing Chromium for the tests: snap install chromium"
        quiet as_root snap install chromium
        have_browser || die "$(cat "$LOG")"
    elif [ "$OS_ID" = ubuntu ]; then
        die "$(cat "$LOG")
       Ubuntu's Chromium is a snap and this machine has no snapd: install snapd (apt-get install snapd,
       which needs systemd running) and then the browser (snap install chromium), or Google Chrome
       (its google-chrome-stable package from https://www.google.com/chrome/)"
    else
        die "$(cat "$LOG")"
    fi
}

if ! command -v dpkg >/dev/null 2>&1; then
    die "dpkg not found: this set-up step supports Debian and Ubuntu only; install by hand:
       $(echo $PACKAGES)"
fi

if [ "$PART" != venv ]; then
    MISSING=$(echo $(missing_packages))
    if [ -n "$MISSING" ]; then
        install_packages "$MISSING"
        STILL=$(echo $(missing_packages))
        [ -z "$STILL" ] || die "still missing after apt-get install: $STILL"
    fi
    case "$PART" in
        packages) say "ok (Debian packages in place)"; exit 0 ;;
        test-packages) browser_for_tests; say "ok (Debian packages in place; the tests' browser: $(cat "$LOG"))"; exit 0 ;;
    esac
fi

# .venv/lava: LAVA's dispatcher and the device-type templates, of the version of lava-common installed
# (lava-dispatcher needs exactly that one), unpacked again when that version changes.
unpack_lab() {
    lab="$VENV/lava"
    version=$(dpkg-query -W -f='${Version}' lava-common)
    [ "$(cat "$lab/.version" 2>/dev/null || true)" != "$version" ] || return 0
    say "unpacking LAVA's dispatcher $version into $lab"
    DEBS=$(mktemp -d "${TMPDIR:-/tmp}/cleanroom-lab.XXXXXX")
    # shellcheck disable=SC2046
    (cd "$DEBS" && quiet apt-get download $(for d in $LAB_DEBS; do printf '%s=%s ' "$d" "$version"; done))
    rm -rf "$lab"
    mkdir -p "$lab/root"
    for deb in "$DEBS"/lava-dispatcher_*.deb "$DEBS"/lava-dispatcher-host_*.deb; do
        quiet dpkg-deb -x "$deb" "$lab/root"
    done
    dpkg-deb --fsys-tarfile "$DEBS"/lava-server_*.deb \
        | tar -x -C "$lab" --strip-components=4 "./$LAB_TEMPLATES" >"$LOG" 2>&1 \
        || { cat "$LOG" >&2; die "failed: unpacking $LAB_TEMPLATES of lava-server"; }
    echo "$version" >"$lab/.version"
}

# .venv: make it (once), then install requirements when their hash changed.
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c '' >/dev/null 2>&1; then
    say "creating $VENV"
    rm -rf "$VENV"
    if ! python3 -m venv "$VENV" >"$LOG" 2>&1; then
        rm -rf "$VENV"
        install_packages "python3-venv"
        quiet python3 -m venv "$VENV"
    fi
fi

WANT=$(sha256sum "$REQ" | cut -d' ' -f1)
HAVE=$(cat "$STAMP" 2>/dev/null || true)
if [ "$WANT" != "$HAVE" ]; then
    say "installing tools/requirements.txt into .venv"
    quiet "$VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$REQ"
    echo "$WANT" >"$STAMP"
fi

# .venv/debian-python/: links to DEBIAN_PY_PACKAGES, on the .venv's path by a .pth file (the .venv
# has no system site packages: the rest of Debian's stays out).
LINKS="$VENV/debian-python"
mkdir -p "$LINKS"
for pkg in $DEBIAN_PY_PACKAGES; do
    [ -d "$DEBIAN_PY/$pkg" ] || die "$DEBIAN_PY/$pkg missing (its Debian package is in the list above)"
    ln -sfn "$DEBIAN_PY/$pkg" "$LINKS/$pkg"
done
SITE=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$LINKS" >"$SITE/cleanroom-debian-python.pth"

if [ "$PART" = venv ]; then
    say "ok (.venv in place)"
elif [ "$PART" = lab-packages ]; then
    unpack_lab
    say "ok (Debian packages, .venv and LAVA's dispatcher in .venv/lava in place)"
else
    say "ok (Debian packages and .venv in place)"
fi
