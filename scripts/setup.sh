#!/usr/bin/env bash
# The Debian packages and the Python virtualenv mpsched runs in: `make setup` runs every step,
# `make ensure-setup` (which `make demo` and `make test` run first) only the steps not yet done.
# `scripts/setup.sh --help` explains.
set -euo pipefail

# What the project needs from Debian (docs/setup.md, Prerequisites): Mininet and the traffic tools,
# python3-venv for the venv, python3-thrift, python3-protobuf and python3-cryptography (seen by
# the venv through --system-site-packages), gcc for linkem, linux-perf for bench-dpcost, Chromium
# for the dashboard's browser tests, nftables to keep BMv2's Thrift port on loopback
# (docs/security.md), openssh-server and sudo for Mininet's cluster edition (every server of a
# cluster takes `ssh user@server sudo ...`; the test runs a second sshd: docs/scaling.md).
APT_PACKAGES=(mininet iperf3 iputils-ping ethtool tcpdump iproute2 python3-venv python3-thrift
              gcc libc6-dev linux-perf chromium chromium-driver python3-protobuf
              python3-cryptography nftables openssh-server sudo)

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${VENV:-.venv}
PY=$VENV/bin/python
STAMP=$VENV/.mpsched-setup

usage() {
    cat <<EOF
Usage: scripts/setup.sh [--if-needed] [--list-packages] [--help]

Installs what mpsched needs from package registries:
  1. the Debian packages ${APT_PACKAGES[*]}
     with apt-get, as root (not root: prints the apt-get command and goes on);
     packages the distribution does not have are named and left out
  2. the virtualenv $VENV on /usr/bin/python3 (--system-site-packages, so that it sees
     Debian's Mininet and protobuf) with requirements.txt and mpsched itself (editable)
Then it says whether p4c and simple_switch_grpc are on PATH (\`make toolchain\` builds them).

Options:
  --if-needed      skip what is done: apt-get only when dpkg-query reports a package
                   missing, the venv only when $STAMP does not record the current
                   requirements.txt, pyproject.toml, Debian packages and this script
                   (what \`make ensure-setup\` runs)
  --list-packages  print the Debian packages, one a line, and exit
  --help, -h       this text

Environment: VENV=DIR (default .venv), relative to the repository.
EOF
}

say() { printf 'setup: %s\n' "$*"; }

# The packages of "$@" dpkg-query does not report installed, one a line.
missing_packages() {
    local p
    command -v dpkg-query >/dev/null || { printf '%s\n' "$@"; return; }
    for p in "$@"; do
        [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == 'install ok installed' ]] || echo "$p"
    done
}

# Of the packages "$@", those apt-get has a candidate for, one a line.
installable_packages() {
    local p
    for p in "$@"; do
        # Not `| grep -q`: grep's early exit kills apt-cache with SIGPIPE, which pipefail reports.
        [[ $(apt-cache policy "$p" 2>/dev/null) =~ Candidate:\ [^\(] ]] && echo "$p"
    done
}

# Whether apt has package lists at all (a fresh container has none).
have_package_lists() {
    compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null
}

apt_install() {
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}

# As root: installs the missing packages apt has a candidate for. `apt-get update` runs only
# when there are no package lists or the install fails (stale lists), so that packages this
# distribution lacks (Ubuntu has no linux-perf) do not cost an update on every run.
install_debian_packages() {
    local p
    local -a missing=() installable=() absent=()
    mapfile -t missing < <(missing_packages "${APT_PACKAGES[@]}")
    if ((${#missing[@]} == 0)); then
        say "Debian packages: all ${#APT_PACKAGES[@]} installed"
        return
    fi
    if [[ $(id -u) != 0 ]]; then
        say "not root, so not installing the missing Debian packages; as root:"
        say "  apt-get install -y --no-install-recommends ${missing[*]}"
        say "going on without them (the tests that need them skip and say why)"
        return
    fi
    say "missing Debian packages: ${missing[*]}"
    have_package_lists || apt-get update -q
    mapfile -t installable < <(installable_packages "${missing[@]}")
    for p in "${missing[@]}"; do
        [[ " ${installable[*]} " == *" $p "* ]] || absent+=("$p")
    done
    if ((${#absent[@]})); then
        say "apt knows no ${absent[*]} (not in this distribution, or run apt-get update):" \
            "left out (the tests that need them skip)"
    fi
    ((${#installable[@]})) || return 0
    say "installing ${installable[*]}"
    if ! apt_install "${installable[@]}"; then
        say "apt-get install failed: updating the package lists and trying again"
        apt-get update -q
        apt_install "${installable[@]}"
    fi
}

# What the venv was made from (this script's steps included): a change to any of it makes
# --if-needed rebuild the venv.
# The missing packages count too: python3-protobuf installed after the venv was made with
# PyPI's fallback protobuf must replace that fallback.
setup_key() {
    {
        cat "$ROOT/requirements.txt" "$ROOT/pyproject.toml" "$ROOT/scripts/setup.sh"
        echo "packages: ${APT_PACKAGES[*]}"
        echo "missing: $(missing_packages "${APT_PACKAGES[@]}" | tr '\n' ' ')"
    } | sha256sum | cut -d' ' -f1
}

venv_is_current() {
    [[ -f $STAMP && $(head -1 "$STAMP") == "$1" ]] && "$PY" -c '' 2>/dev/null
}

make_venv() {
    local key=$1
    if ! /usr/bin/python3 -m venv --system-site-packages "$VENV"; then
        say "cannot make $VENV: /usr/bin/python3 -m venv failed (python3-venv missing? as root:" \
            "apt-get install python3-venv)"
        exit 1
    fi
    # A venv made before protobuf came from Debian holds PyPI's pure-Python protobuf: drop it.
    if "$PY" -c 'import google.protobuf, sys; sys.exit("dist-packages" in google.protobuf.__file__)' \
        2>/dev/null; then
        "$PY" -m pip uninstall -y -q protobuf
    fi
    "$PY" -m pip install -q -r "$ROOT/requirements.txt"
    "$PY" -m pip install -q --no-deps --no-build-isolation -e "$ROOT"
    if ! "$PY" -c 'from p4.v1 import p4runtime_pb2' 2>/dev/null; then
        say "Debian's python3-protobuf is missing: falling back to PyPI's pure-Python protobuf" \
            "3.20.3 (the controller's P4Runtime stream then costs about 6x the CPU)"
        "$PY" -m pip install -q protobuf==3.20.3
    fi
    printf '%s\nmade %s by scripts/setup.sh from requirements.txt, pyproject.toml and: %s\n' \
        "$key" "$(date -u +%FT%TZ)" "${APT_PACKAGES[*]}" >"$STAMP"
    say "$VENV ready"
}

main() {
    local if_needed=0 key
    while (($#)); do
        case $1 in
            -h | --help) usage; exit 0 ;;
            --list-packages) printf '%s\n' "${APT_PACKAGES[@]}"; exit 0 ;;
            --if-needed) if_needed=1 ;;
            *) usage >&2; say "unknown argument: $1" >&2; exit 2 ;;
        esac
        shift
    done
    cd "$ROOT"
    install_debian_packages
    key=$(setup_key)
    if ((if_needed)) && venv_is_current "$key"; then
        say "$VENV is up to date (made $(sed -n 's/^made \([^ ]*\).*/\1/p' "$STAMP") from the" \
            "current requirements.txt, pyproject.toml, Debian packages and scripts/setup.sh):" \
            "nothing to do"
    else
        make_venv "$key"
    fi
    if ! command -v p4c >/dev/null || ! command -v simple_switch_grpc >/dev/null; then
        say "p4c and/or simple_switch_grpc not on PATH (they are in no Debian or PyPI" \
            "repository): \`make toolchain\` installs them. Until then the tests that need them skip."
    fi
}

# Sourced (by its unit tests), it only defines the functions.
[[ ${BASH_SOURCE[0]} != "$0" ]] || main "$@"
