#!/usr/bin/env bash
# Install the P4 toolchain mpsched is tested with: p4lang/PI, BMv2's
# simple_switch_grpc and p4c (BMv2 back end only), at pinned versions: p4lang's
# prebuilt Debian/Ubuntu packages where their repository has those versions,
# else built from the pinned sources.
# `scripts/toolchain.sh --help` explains the variables; `make toolchain` runs it.
set -euo pipefail

# ---------------------------------------------------------------------------
# Pinned versions
# ---------------------------------------------------------------------------
PI_COMMIT=f96af95e090619491e3abf2df69df340c2c9cb46
BMV2_TAG=1.15.5
P4C_TAG=v1.2.4.4
P4C_VERSION=1.2.4.4
# p4c v1.2.4.4 pulls p4lang/p4runtime at this commit with CMake FetchContent
# (CMakeLists.txt, "P4Runtime Begin"); we hand it a checkout instead.
P4RUNTIME_COMMIT=1e771c4e05c4e7e250df00212b3ca02ee3202d71

PI_URL=https://github.com/p4lang/PI.git
BMV2_URL=https://github.com/p4lang/behavioral-model.git
P4C_URL=https://github.com/p4lang/p4c.git
P4RUNTIME_URL=https://github.com/p4lang/p4runtime.git

COMPONENTS=(pi bmv2 p4c)

# p4lang's prebuilt packages: the openSUSE Build Service project home:p4lang
# publishes p4lang-pi, p4lang-bmv2 and p4lang-p4c as flat apt repositories, one
# per distribution (Debian_12, xUbuntu_22.04, ...), each with its Packages
# index and Release.key (https://build.opensuse.org/project/show/home:p4lang).
P4LANG_OBS=https://download.opensuse.org/repositories/home:/p4lang

# Build times measured on a 2-core machine (JOBS=2, under nice; docs/setup.md,
# The P4 toolchain), in seconds: the estimate printed before a build from source.
declare -A MEASURED_S=([pi]=208 [bmv2]=517 [p4c]=378)

# Debian 12 build dependencies, from each project's README, install_deps.sh,
# Dockerfile and configure.ac/CMakeLists.txt at the pinned versions.
DEPS_COMMON="autoconf automake libtool pkg-config g++ make git ca-certificates python3"
DEPS_PI="libprotobuf-dev protobuf-compiler libgrpc++-dev protobuf-compiler-grpc
         libboost-dev libboost-system-dev libboost-thread-dev"
DEPS_BMV2="libgmp-dev libpcap-dev libboost-dev libboost-program-options-dev
           libboost-system-dev libboost-filesystem-dev libboost-thread-dev
           libthrift-dev thrift-compiler libnanomsg-dev libjsoncpp-dev libxxhash-dev
           libprotobuf-dev protobuf-compiler libgrpc++-dev protobuf-compiler-grpc"
DEPS_P4C="cmake bison flex libfl-dev libboost-dev libboost-iostreams-dev libgc-dev
          libprotobuf-dev protobuf-compiler"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SCRIPT_START=$SECONDS

usage() {
    cat <<EOF
Usage: scripts/toolchain.sh [--dry-run] [--ensure] [--help]

Installs the P4 toolchain mpsched is tested with. First choice: p4lang's
prebuilt packages p4lang-bmv2 (with its p4lang-pi) and p4lang-p4c, from the
openSUSE Build Service repository home:p4lang for this distribution
($P4LANG_OBS/<Debian_N or xUbuntu_N>), when its
Packages index answers within TOOLCHAIN_PROBE_TIMEOUT seconds and offers the
pinned versions (BMv2 $BMV2_TAG, p4c $P4C_VERSION): apt-get installs them into
/usr, a few minutes, mostly downloads. Otherwise (unreachable, not offered for
this distribution, other versions, TOOLCHAIN_SRC set or TOOLCHAIN_PREBUILT=0)
it builds from the pinned sources, in this order:
  PI    p4lang/PI at commit ${PI_COMMIT:0:7}, configured --with-proto
        --without-internal-rpc --without-cli --without-bmv2
  BMv2  p4lang/behavioral-model at tag $BMV2_TAG, CXXFLAGS=-O2, --with-pi
        --with-thrift --with-nanomsg --disable-logging-macros --disable-elogger;
        installs simple_switch_grpc (and simple_switch)
  p4c   p4lang/p4c at tag $P4C_TAG, CMake Release, BMv2 back end only, against
        Debian's protobuf; its P4Runtime dependency is p4lang/p4runtime at
        ${P4RUNTIME_COMMIT:0:7}
First, as root, it installs the Debian build dependencies with apt-get (not
root: it lists the missing ones and stops).

The build takes about 20 minutes on 2 cores, plus the apt-get downloads
(measured with JOBS=2 under nice: PI $(fmt_duration "${MEASURED_S[pi]}"), BMv2 $(fmt_duration "${MEASURED_S[bmv2]}"), p4c
$(fmt_duration "${MEASURED_S[p4c]}") as a unity build).
Compiler output goes to \$TOOLCHAIN_WORK/logs/<component>.log; the terminal
shows one line per step. At the end: time per component, \`p4c --version\`,
\`simple_switch_grpc --help | head -1\` and p4src/main.p4 compiled with p4c.

Re-running skips a component already installed at the pinned version: this
script records \$PREFIX/share/mpsched-toolchain/<component>.version, and also
recognises an install it did not make (p4c --version says $P4C_VERSION;
simple_switch_grpc --version says $BMV2_TAG; PI: libpi and libpigrpcserver in
\$PREFIX/lib, and PI/pi.h too when BMv2 is to be built), in \$PREFIX or, for
p4c and simple_switch_grpc, elsewhere on PATH (p4lang's packages: PI then
comes with BMv2).

Options:
  --dry-run, -n   print the plan (what is installed, built or skipped, and
                  why, from where, how long it takes) and the missing Debian
                  packages; install nothing
  --ensure        (\`make ensure-toolchain\`) do nothing when p4c and
                  simple_switch_grpc on PATH report the pinned versions;
                  else run as without it, but when not root and PREFIX is
                  not writable, say what to run and exit 0
  --help, -h      this text

Environment:
  PREFIX=DIR                install prefix (default /usr/local); later
                            components find earlier ones there (PATH,
                            PKG_CONFIG_PATH, CPPFLAGS, LDFLAGS with rpath,
                            LD_LIBRARY_PATH, CMAKE_PREFIX_PATH)
  JOBS=N                    parallel compile jobs (default: nproc)
  TOOLCHAIN_WORK=DIR        sources, build trees and logs (default
                            build/toolchain in the repository)
  TOOLCHAIN_SRC=DIR         build from local checkouts instead of cloning from
                            GitHub: DIR/PI, DIR/behavioral-model, DIR/p4c and
                            DIR/p4runtime, at the pinned versions, submodules
                            included (PI's); nothing is downloaded then and
                            the checkouts are not modified
  TOOLCHAIN_ALLOW_OTHER=1   accept TOOLCHAIN_SRC checkouts at other versions
  TOOLCHAIN_FORCE=1         rebuild even what is already installed
  TOOLCHAIN_PREBUILT=0      never use p4lang's prebuilt packages
  TOOLCHAIN_REPO=URL        p4lang's repository for this distribution (here:
                            $(repo=$(default_repo); echo "${repo:-none}"));
                            file:///DIR reads DIR/Packages, no network
  TOOLCHAIN_PROBE_TIMEOUT=S seconds to wait for TOOLCHAIN_REPO (default 5)

Examples:
  sudo scripts/toolchain.sh
  PREFIX=\$HOME/p4 JOBS=4 scripts/toolchain.sh --dry-run
EOF
}

# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------
say() { printf 'toolchain: %s\n' "$*"; }
die() {
    printf 'toolchain: error: %s\n' "$*" >&2
    exit "${DIE_STATUS:-1}"
}

# 372 -> 6m12s, 4000 -> 1h06m40s
fmt_duration() {
    local s=$1
    if ((s >= 3600)); then
        printf '%dh%02dm%02ds' $((s / 3600)) $((s % 3600 / 60)) $((s % 60))
    else
        printf '%dm%02ds' $((s / 60)) $((s % 60))
    fi
}

label() {
    case $1 in
        pi) echo PI ;;
        bmv2) echo BMv2 ;;
        p4c) echo p4c ;;
        p4runtime) echo p4runtime ;;
        prebuilt) echo "p4lang's packages" ;;
        *) echo "$1" ;;
    esac
}

# The directory under TOOLCHAIN_SRC (or TOOLCHAIN_WORK/src) holding a component.
src_name() {
    case $1 in
        pi) echo PI ;;
        bmv2) echo behavioral-model ;;
        p4c) echo p4c ;;
        p4runtime) echo p4runtime ;;
    esac
}

pinned() {
    case $1 in
        pi) echo "$PI_COMMIT" ;;
        bmv2) echo "$BMV2_TAG" ;;
        p4c) echo "$P4C_TAG" ;;
        p4runtime) echo "$P4RUNTIME_COMMIT" ;;
    esac
}

deps_of() {
    case $1 in
        pi) echo "$DEPS_PI" ;;
        bmv2) echo "$DEPS_BMV2" ;;
        p4c) echo "$DEPS_P4C" ;;
    esac
}

# ---------------------------------------------------------------------------
# Configuration and environment
# ---------------------------------------------------------------------------
read_config() {
    PREFIX=${PREFIX:-/usr/local}
    JOBS=${JOBS:-$(nproc)}
    TOOLCHAIN_WORK=${TOOLCHAIN_WORK:-$ROOT/build/toolchain}
    TOOLCHAIN_SRC=${TOOLCHAIN_SRC:-}
    TOOLCHAIN_FORCE=${TOOLCHAIN_FORCE:-0}
    TOOLCHAIN_ALLOW_OTHER=${TOOLCHAIN_ALLOW_OTHER:-0}
    TOOLCHAIN_PREBUILT=${TOOLCHAIN_PREBUILT:-1}
    TOOLCHAIN_REPO=${TOOLCHAIN_REPO:-$(default_repo)}
    TOOLCHAIN_PROBE_TIMEOUT=${TOOLCHAIN_PROBE_TIMEOUT:-5}

    [[ $PREFIX == /* ]] || die "PREFIX must be an absolute path (got '$PREFIX')"
    PREFIX=${PREFIX%/}
    [[ $JOBS =~ ^[1-9][0-9]*$ ]] || die "JOBS must be a positive integer (got '$JOBS')"
    [[ $TOOLCHAIN_PROBE_TIMEOUT =~ ^[1-9][0-9]*$ ]] ||
        die "TOOLCHAIN_PROBE_TIMEOUT must be a positive integer (got '$TOOLCHAIN_PROBE_TIMEOUT')"
    [[ $TOOLCHAIN_WORK == /* ]] || TOOLCHAIN_WORK=$PWD/$TOOLCHAIN_WORK
    if [[ -n $TOOLCHAIN_SRC ]]; then
        [[ -d $TOOLCHAIN_SRC ]] || die "TOOLCHAIN_SRC=$TOOLCHAIN_SRC is not a directory"
        TOOLCHAIN_SRC=$(cd "$TOOLCHAIN_SRC" && pwd)
    fi
    LOGS=$TOOLCHAIN_WORK/logs
    STAMPS=$PREFIX/share/mpsched-toolchain
}

# Make what is installed in PREFIX visible to the builds (and checks) after it.
export_prefix_env() {
    export PATH="$PREFIX/bin:$PATH"
    export LD_LIBRARY_PATH="$PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig:$PREFIX/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
    export CMAKE_PREFIX_PATH="$PREFIX${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
    export CPPFLAGS="-I$PREFIX/include${CPPFLAGS:+ $CPPFLAGS}"
    # The rpath lets simple_switch_grpc find libpi* in a non-system prefix at run time.
    export LDFLAGS="-L$PREFIX/lib -Wl,-rpath,$PREFIX/lib${LDFLAGS:+ $LDFLAGS}"
}

# ---------------------------------------------------------------------------
# What is installed already
# ---------------------------------------------------------------------------
stamp_file() { echo "$STAMPS/$1.version"; }

# The version this run would install (what the stamp must say to skip).
wanted_version() {
    local comp=$1 have
    if [[ -n $TOOLCHAIN_SRC && $TOOLCHAIN_ALLOW_OTHER == 1 ]]; then
        have=$(checkout_version "$comp" "$TOOLCHAIN_SRC/$(src_name "$comp")")
        [[ -n $have ]] && { echo "$have"; return; }
    fi
    pinned "$comp"
}

# Files without which a component does not count as installed.
key_files_present() {
    case $1 in
        pi) compgen -G "$PREFIX/lib/libpi.so*" >/dev/null &&
            compgen -G "$PREFIX/lib/libpigrpcserver.so*" >/dev/null ;;
        bmv2) [[ -x $PREFIX/bin/simple_switch_grpc ]] ;;
        p4c) [[ -x $PREFIX/bin/p4c && -x $PREFIX/bin/p4c-bm2-ss ]] ;;
    esac
}

# The program by which an install of COMPONENT is recognised and its version read.
program_of() {
    case $1 in
        bmv2) echo simple_switch_grpc ;;
        p4c) echo p4c ;;
    esac
}

# Version an install reports itself, for installs this script did not make: of
# the program in PREFIX, or of PROGRAM (a path) if given.
reported_version() {
    local prog=${2:-$PREFIX/bin/$(program_of "$1")}
    timeout 20 "$prog" --version 2>/dev/null | head -1 || true
}

# Whether VERSION (as `--version` prints it) is the pinned one of COMPONENT.
version_ok() {
    case $1 in
        bmv2) [[ $2 =~ ^${BMV2_TAG//./\\.}(-|$) ]] ;;
        p4c) [[ $2 =~ (^|[[:space:]])${P4C_VERSION//./\\.}([[:space:]]|$) ]] ;;
        *) return 1 ;;
    esac
}

# COMPONENT's program found on PATH outside PREFIX (p4lang's packages put them
# in /usr/bin) at the pinned version: sets INSTALLED_REASON and ELSEWHERE.
installed_on_path() {
    local comp=$1 prog have
    [[ $comp == bmv2 || $comp == p4c ]] || return 1
    prog=$(command -v "$(program_of "$comp")") || return 1
    [[ $prog != "$PREFIX"/bin/* ]] || return 1
    have=$(reported_version "$comp" "$prog")
    version_ok "$comp" "$have" || return 1
    INSTALLED_REASON="already installed at $prog ($(program_of "$comp") --version: $have)"
    ELSEWHERE[$comp]=$prog
}

# For --ensure: p4c and simple_switch_grpc on PATH report the pinned versions.
# Sets READY_DESC.
tools_ready() {
    local comp prog have
    READY_DESC=""
    for comp in p4c bmv2; do
        prog=$(command -v "$(program_of "$comp")") || return 1
        have=$(reported_version "$comp" "$prog")
        version_ok "$comp" "$have" || return 1
        READY_DESC+="${READY_DESC:+, }$prog ($have)"
    done
}

# Sets INSTALLED_REASON; returns 0 when COMPONENT needs no build.
is_installed() {
    local comp=$1 want stamp have
    want=$(wanted_version "$comp")
    stamp=$(stamp_file "$comp")
    if [[ $TOOLCHAIN_FORCE == 1 ]]; then
        INSTALLED_REASON="TOOLCHAIN_FORCE=1"
        return 1
    fi
    if ! key_files_present "$comp"; then
        installed_on_path "$comp" && return 0
        INSTALLED_REASON="not installed in $PREFIX"
        return 1
    fi
    if [[ -f $stamp ]]; then
        have=$(head -1 "$stamp")
        if [[ $have == "$want" ]]; then
            INSTALLED_REASON="already installed in $PREFIX ($stamp says $have)"
            return 0
        fi
        INSTALLED_REASON="$stamp says $have, want $want"
        return 1
    fi
    case $comp in
        pi)
            INSTALLED_REASON="already installed in $PREFIX (libpi and libpigrpcserver present; not made by this script, version not checked)"
            return 0 ;;
        bmv2 | p4c)
            have=$(reported_version "$comp")
            if version_ok "$comp" "$have"; then
                INSTALLED_REASON="already installed in $PREFIX ($(program_of "$comp") --version: $have)"
                return 0
            fi ;;
    esac
    INSTALLED_REASON="$PREFIX has $(label "$comp") '${have:-unknown version}', want $want"
    return 1
}

# ---------------------------------------------------------------------------
# p4lang's prebuilt packages
# ---------------------------------------------------------------------------
# This system as /etc/os-release names it ("debian 12").
os_name() {
    (
        # shellcheck source=/dev/null
        [[ -r /etc/os-release ]] && . /etc/os-release
        echo "${ID:-unknown} ${VERSION_ID:-}"
    )
}

# p4lang's repository for this distribution; nothing where it publishes none.
default_repo() {
    local id version
    read -r id version < <(os_name) || true
    case $id in
        debian) [[ -z $version ]] || echo "$P4LANG_OBS/Debian_$version/" ;;
        ubuntu) [[ -z $version ]] || echo "$P4LANG_OBS/xUbuntu_$version/" ;;
    esac
    return 0
}

# fetch_url URL SECONDS: prints URL's body; fails on any error or after SECONDS.
# file:// URLs are read directly (tests, local mirrors).
fetch_url() {
    local url=$1 t=$2
    case $url in
        file://*) cat "${url#file://}" 2>/dev/null ;;
        *)
            if command -v curl >/dev/null; then
                curl -fsSL --connect-timeout "$t" --max-time "$t" "$url" 2>/dev/null
            elif command -v wget >/dev/null; then
                timeout "$t" wget -q -O - "$url" 2>/dev/null
            else
                timeout "$t" python3 -c 'import sys, urllib.request
sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1]).read())' "$url" 2>/dev/null
            fi ;;
    esac
}

# The versions of package NAME a Packages index (stdin) lists, one a line.
index_versions() {
    awk -v want="$1" '/^Package: /{p=$2} /^Version: /{if (p == want) print $2}' | sort -u
}

# probe_prebuilt COMPONENT...: which of the components (BMv2 and p4c; PI comes
# with BMv2) p4lang's repository offers at the pinned version. Sets
# PREBUILT[comp]=package=version for those, and PREBUILT_WHY to why not for the
# others. Reads one file, the repository's Packages index, waiting at most
# TOOLCHAIN_PROBE_TIMEOUT seconds.
probe_prebuilt() {
    local comp index pkg want offered match
    PREBUILT_WHY=""
    if [[ -n $TOOLCHAIN_SRC ]]; then
        PREBUILT_WHY="TOOLCHAIN_SRC is set"
        return
    elif [[ $TOOLCHAIN_PREBUILT != 1 ]]; then
        PREBUILT_WHY="TOOLCHAIN_PREBUILT=$TOOLCHAIN_PREBUILT"
        return
    elif [[ -z $TOOLCHAIN_REPO ]]; then
        PREBUILT_WHY="p4lang publishes no packages for this system ($(os_name))"
        return
    elif [[ $TOOLCHAIN_REPO != file://* ]] && ! command -v curl wget python3 >/dev/null; then
        PREBUILT_WHY="no curl, wget or python3 to read p4lang's repository with"
        return
    fi
    if ! index=$(fetch_url "${TOOLCHAIN_REPO%/}/Packages" "$TOOLCHAIN_PROBE_TIMEOUT") || [[ -z $index ]]; then
        PREBUILT_WHY="p4lang's repository ${TOOLCHAIN_REPO%/}/ is unreachable (no Packages index within ${TOOLCHAIN_PROBE_TIMEOUT} s)"
        return
    fi
    for comp in "$@"; do
        case $comp in
            bmv2) want=$BMV2_TAG ;;
            p4c) want=$P4C_VERSION ;;
            *) continue ;;
        esac
        pkg=p4lang-$comp
        offered=$(index_versions "$pkg" <<<"$index" | tr '\n' ' ')
        offered=${offered% }
        match=$(tr ' ' '\n' <<<"$offered" | grep -E "^([0-9]+:)?${want//./\\.}([-~+].*)?$" | tail -1 || true)
        if [[ -n $match ]]; then
            PREBUILT[$comp]="$pkg=$match"
        else
            PREBUILT_WHY+="${PREBUILT_WHY:+; }${TOOLCHAIN_REPO%/}/ has $pkg ${offered:-none}, not $want"
        fi
    done
}

# Adds p4lang's repository to apt (its key in /etc/apt/keyrings, for it only)
# and installs PREBUILT's packages at their pinned versions.
fetch_key() {
    mkdir -p "$(dirname "$1")"
    fetch_url "${TOOLCHAIN_REPO%/}/Release.key" 60 >"$1.tmp" && [[ -s $1.tmp ]] && mv "$1.tmp" "$1"
}

install_prebuilt() {
    local key=/etc/apt/keyrings/home-p4lang.asc list=/etc/apt/sources.list.d/home-p4lang.list
    : >"$LOGS/prebuilt.log"
    run_step prebuilt "fetch the repository's Release.key" / fetch_key "$key"
    printf 'deb [signed-by=%s] %s /\n' "$key" "${TOOLCHAIN_REPO%/}/" >"$list"
    run_step prebuilt "apt-get update" / apt-get update
    run_step prebuilt "apt-get install ${PREBUILT[*]}" / \
        env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${PREBUILT[@]}"
    hash -r
}

# ---------------------------------------------------------------------------
# Sources
# ---------------------------------------------------------------------------
# git for reading a checkout's version. The checkout may belong to another user
# (sudo with TOOLCHAIN_SRC under a home directory), which git refuses by
# default; building it trusts it anyway.
git_query() { git -c safe.directory='*' "$@"; }

# Identity of a checkout comparable with `pinned`: commit for PI/p4runtime,
# exact tag for BMv2/p4c (or the VERSION/Version.txt file outside git).
# Prints nothing when it cannot tell.
checkout_version() {
    local comp=$1 dir=$2
    [[ -d $dir ]] || return 0
    case $comp in
        pi | p4runtime)
            git_query -C "$dir" rev-parse HEAD 2>/dev/null || true ;;
        bmv2)
            git_query -C "$dir" describe --tags --exact-match 2>/dev/null ||
                git_query -C "$dir" describe --tags --always 2>/dev/null ||
                { [[ -f $dir/VERSION ]] && head -1 "$dir/VERSION"; } || true ;;
        p4c)
            git_query -C "$dir" describe --tags --exact-match 2>/dev/null ||
                git_query -C "$dir" describe --tags --always 2>/dev/null ||
                { [[ -f $dir/Version.txt ]] && echo "v$(head -1 "$dir/Version.txt")"; } || true ;;
    esac
}

# A file each checkout must have (PI's: from its submodules).
required_files() {
    case $1 in
        pi) echo "configure.ac proto/p4runtime/proto/p4/v1/p4runtime.proto
                  proto/openconfig/gnmi/proto/gnmi/gnmi.proto third_party/uthash/src/uthash.h" ;;
        bmv2) echo "configure.ac targets/simple_switch_grpc/configure.ac" ;;
        p4c) echo "CMakeLists.txt backends/bmv2/CMakeLists.txt" ;;
        p4runtime) echo "proto/p4/v1/p4runtime.proto" ;;
    esac
}

# Sources a component's build needs: p4c also needs p4runtime.
sources_of() {
    case $1 in
        p4c) echo "p4c p4runtime" ;;
        *) echo "$1" ;;
    esac
}

# Checks a TOOLCHAIN_SRC checkout; prints a problem, or nothing when usable.
check_local_source() {
    local comp=$1 dir f have want
    dir=$TOOLCHAIN_SRC/$(src_name "$comp")
    if [[ ! -d $dir ]]; then
        echo "missing checkout $dir ($(label "$comp") $(pinned "$comp"))"
        return
    fi
    for f in $(required_files "$comp"); do
        if [[ ! -e $dir/$f ]]; then
            echo "$dir has no $f (submodules not checked out? run: git -C $dir submodule update --init --recursive)"
            return
        fi
    done
    if [[ $comp == pi ]] && git_query -C "$dir" submodule status --recursive 2>/dev/null | grep -q '^[-+]'; then
        echo "$dir: submodules missing or not at the recorded commits (git -C $dir submodule update --init --recursive)"
        return
    fi
    [[ $TOOLCHAIN_ALLOW_OTHER == 1 ]] && return
    have=$(checkout_version "$comp" "$dir")
    want=$(pinned "$comp")
    if [[ -z $have ]]; then
        echo "cannot tell the version of $dir (not a git checkout); set TOOLCHAIN_ALLOW_OTHER=1 to use it anyway"
    elif [[ $have != "$want" ]]; then
        echo "$dir is at $have, not the pinned $want; check out $want, or set TOOLCHAIN_ALLOW_OTHER=1"
    fi
}

# Where a component's sources come from, for the plan.
source_desc() {
    local comp=$1
    if [[ -n $TOOLCHAIN_SRC ]]; then
        echo "$TOOLCHAIN_SRC/$(src_name "$comp")"
    else
        case $comp in
            pi) echo "$PI_URL @ $PI_COMMIT" ;;
            bmv2) echo "$BMV2_URL @ $BMV2_TAG" ;;
            p4c) echo "$P4C_URL @ $P4C_TAG" ;;
            p4runtime) echo "$P4RUNTIME_URL @ $P4RUNTIME_COMMIT" ;;
        esac
    fi
}

# Clones a pinned source into TOOLCHAIN_WORK/src, unless already there.
clone_source() {
    local comp=$1 dir url rev
    dir=$TOOLCHAIN_WORK/src/$(src_name "$comp")
    rev=$(pinned "$comp")
    if [[ -d $dir && $(checkout_version "$comp" "$dir") == "$rev" ]]; then
        echo "$dir already at $rev"
        return
    fi
    rm -rf "$dir"
    case $comp in
        pi | p4runtime)
            # A commit, not a tag: fetch just that commit (GitHub allows it).
            url=$([[ $comp == pi ]] && echo "$PI_URL" || echo "$P4RUNTIME_URL")
            git init -q "$dir"
            git -C "$dir" remote add origin "$url"
            git -C "$dir" fetch --depth 1 origin "$rev"
            git -C "$dir" checkout -q FETCH_HEAD
            git -C "$dir" submodule update --init --recursive --depth 1 ;;
        bmv2 | p4c)
            url=$([[ $comp == bmv2 ]] && echo "$BMV2_URL" || echo "$P4C_URL")
            git clone --depth 1 --branch "$rev" --recurse-submodules --shallow-submodules "$url" "$dir" ;;
    esac
}

# Directory the sources of COMPONENT are read from.
source_dir() {
    if [[ -n $TOOLCHAIN_SRC ]]; then
        echo "$TOOLCHAIN_SRC/$(src_name "$1")"
    else
        echo "$TOOLCHAIN_WORK/src/$(src_name "$1")"
    fi
}

# Autotools builds write into their source tree (autogen.sh, configure), so
# PI and BMv2 are built in a fresh copy (without .git) of their sources.
copy_tree() {
    local from=$1 to=$2
    rm -rf "$to"
    mkdir -p "$to"
    tar -C "$from" --exclude=.git -cf - . | tar -C "$to" -xf -
}

# ---------------------------------------------------------------------------
# Steps, logs, timing
# ---------------------------------------------------------------------------
# run_step COMPONENT DESCRIPTION DIR COMMAND...: runs COMMAND in DIR with its
# output appended to the component's log; one terminal line per step.
run_step() {
    local comp=$1 desc=$2 dir=$3 log start rc=0
    shift 3
    log=$LOGS/$comp.log
    start=$SECONDS
    printf 'toolchain: [%9s] %s: %s ... ' "$(fmt_duration $((SECONDS - SCRIPT_START)))" "$(label "$comp")" "$desc"
    printf '\n=== %s: %s (in %s)\n$ %s\n' "$(date -u +%FT%TZ)" "$desc" "$dir" "$*" >>"$log"
    (cd "$dir" && "$@") >>"$log" 2>&1 </dev/null || rc=$?
    if ((rc != 0)); then
        printf 'FAILED after %s (exit %d)\n' "$(fmt_duration $((SECONDS - start)))" "$rc"
        say "last 30 lines of $log:"
        tail -n 30 "$log" | sed 's/^/    /'
        say "$(label "$comp") failed at '$desc'; full log: $log"
        exit 1
    fi
    printf 'ok (%s)\n' "$(fmt_duration $((SECONDS - start)))"
}

write_stamp() {
    local comp=$1 version=$2 from=$3
    mkdir -p "$STAMPS"
    printf '%s\nbuilt %s by mpsched scripts/toolchain.sh from %s\n' \
        "$version" "$(date -u +%FT%TZ)" "$from" >"$(stamp_file "$comp")"
}

# Refreshes the dynamic linker's cache after installing into a system prefix.
maybe_ldconfig() {
    if [[ $(id -u) == 0 && ($PREFIX == /usr/local || $PREFIX == /usr) ]]; then
        ldconfig
    fi
}

# ---------------------------------------------------------------------------
# Components
# ---------------------------------------------------------------------------
fetch_sources() {
    local comp=$1 c
    for c in $(sources_of "$comp"); do
        if [[ -z $TOOLCHAIN_SRC ]]; then
            run_step "$comp" "clone $(label "$c") $(pinned "$c")" "$TOOLCHAIN_WORK" clone_source "$c"
        fi
    done
}

build_pi() {
    local b=$TOOLCHAIN_WORK/build/PI
    run_step pi "copy sources" "$TOOLCHAIN_WORK" copy_tree "$(source_dir pi)" "$b"
    run_step pi "autogen.sh" "$b" ./autogen.sh
    run_step pi "configure" "$b" ./configure --prefix="$PREFIX" \
        --with-proto --without-internal-rpc --without-cli --without-bmv2
    run_step pi "make -j$JOBS" "$b" make -j"$JOBS"
    run_step pi "make install" "$b" make install
    run_step pi "ldconfig" "$b" maybe_ldconfig
}

build_bmv2() {
    local b=$TOOLCHAIN_WORK/build/behavioral-model
    run_step bmv2 "copy sources" "$TOOLCHAIN_WORK" copy_tree "$(source_dir bmv2)" "$b"
    run_step bmv2 "autogen.sh" "$b" ./autogen.sh
    run_step bmv2 "configure" "$b" ./configure --prefix="$PREFIX" \
        --with-pi --with-thrift --with-nanomsg --disable-logging-macros --disable-elogger \
        CXXFLAGS=-O2
    run_step bmv2 "make -j$JOBS" "$b" make -j"$JOBS"
    run_step bmv2 "make install" "$b" make install
    run_step bmv2 "ldconfig" "$b" maybe_ldconfig
}

# p4c builds out of tree: its checkout stays untouched and an interrupted build
# resumes where it stopped on the next run.
build_p4c() {
    local src b
    src=$(source_dir p4c)
    b=$TOOLCHAIN_WORK/build/p4c
    if [[ -f $b/CMakeCache.txt ]] && ! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$src" "$b/CMakeCache.txt"; then
        rm -rf "$b"
    fi
    mkdir -p "$b"
    # Unity builds are upstream's CI default and much faster on few cores.
    # FETCHCONTENT_*: the only remaining FetchContent (p4runtime) is served from
    # a checkout, and nothing is downloaded during the build.
    run_step p4c "cmake" "$b" cmake -S "$src" -B "$b" \
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
        -DCMAKE_UNITY_BUILD=ON \
        -DENABLE_BMV2=ON -DENABLE_EBPF=OFF -DENABLE_UBPF=OFF -DENABLE_DPDK=OFF \
        -DENABLE_P4TC=OFF -DENABLE_P4TEST=OFF -DENABLE_P4C_GRAPHS=OFF \
        -DENABLE_TEST_TOOLS=OFF -DENABLE_GTESTS=OFF -DENABLE_DOCS=OFF \
        -DP4C_USE_PREINSTALLED_PROTOBUF=ON -DENABLE_PROTOBUF_STATIC=OFF \
        -DFETCHCONTENT_FULLY_DISCONNECTED=ON \
        -DFETCHCONTENT_SOURCE_DIR_P4RUNTIME="$(source_dir p4runtime)"
    run_step p4c "build -j$JOBS" "$b" cmake --build "$b" -j "$JOBS"
    run_step p4c "install" "$b" cmake --install "$b"
}

# ---------------------------------------------------------------------------
# Debian build dependencies
# ---------------------------------------------------------------------------
missing_packages() {
    local p
    command -v dpkg-query >/dev/null || return 0
    for p in "$@"; do
        dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || echo "$p"
    done
}

# The Debian packages building COMPONENTS needs, one a line, without repeats.
needed_packages() {
    local comp
    {
        echo "$DEPS_COMMON"
        for comp in "$@"; do deps_of "$comp"; done
    } | tr -s '[:space:]' '\n' | awk 'NF && !seen[$0]++'
}

install_deps() {
    local -a pkgs missing
    mapfile -t pkgs < <(needed_packages "$@")
    mapfile -t missing < <(missing_packages "${pkgs[@]}")
    if ((${#missing[@]} == 0)); then
        say "Debian build dependencies: all present"
        return
    fi
    if [[ $(id -u) != 0 ]]; then
        say "missing Debian build dependencies (not root, so not installing them):"
        say "  ${missing[*]}"
        die "install them first: sudo apt-get install -y --no-install-recommends ${missing[*]}"
    fi
    : >"$LOGS/deps.log"
    say "installing Debian build dependencies: ${missing[*]}"
    run_step deps "apt-get update" / apt-get update
    run_step deps "apt-get install (${#missing[@]} packages)" / \
        env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
}

# ---------------------------------------------------------------------------
# Final check
# ---------------------------------------------------------------------------
check_toolchain() {
    local tmp ok=1
    say "check: $(command -v p4c || echo 'p4c: not on PATH')"
    p4c --version || ok=0
    say "check: $(command -v simple_switch_grpc || echo 'simple_switch_grpc: not on PATH')"
    # --help exits non-zero on some versions; head closes the pipe early.
    (set +o pipefail; simple_switch_grpc --help 2>&1 | head -1) || ok=0
    tmp=$(mktemp -d)
    if p4c --target bmv2 --arch v1model --std p4-16 -o "$tmp" \
        --p4runtime-files "$tmp/main.p4info.txt" "$ROOT/p4src/main.p4" >"$tmp/p4c.out" 2>&1 &&
        [[ -s $tmp/main.json && -s $tmp/main.p4info.txt ]]; then
        say "check: p4src/main.p4 compiles (main.json $(wc -c <"$tmp/main.json") bytes)"
    else
        sed 's/^/    /' "$tmp/p4c.out"
        say "check: compiling p4src/main.p4 FAILED"
        ok=0
    fi
    rm -rf "$tmp"
    ((ok == 1)) || die "the installed toolchain failed its check"
}

# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------
# The plan, set by make_plan: per component REASON; INSTALL (the components to
# install), PREBUILT (those from p4lang's packages: package=version) and
# SOURCE (those built from source); PROBLEMS with TOOLCHAIN_SRC checkouts.
declare -A REASON=() PREBUILT=() ELSEWHERE=()
declare -a INSTALL=() SOURCE=() PROBLEMS=()
PREBUILT_WHY=""

make_plan() {
    local comp c problem
    local -A installed=()
    for comp in "${COMPONENTS[@]}"; do
        is_installed "$comp" && installed[$comp]=1
        REASON[$comp]=$INSTALLED_REASON
    done
    # p4lang's BMv2 package brings the PI it was built against.
    if [[ -n ${ELSEWHERE[bmv2]:-} && -z ${installed[pi]:-} ]]; then
        installed[pi]=1
        REASON[pi]="BMv2 at ${ELSEWHERE[bmv2]} comes with its own PI"
    fi
    # A runtime-only PI install (no headers) is enough unless BMv2 is built.
    if [[ -n ${installed[pi]:-} && -z ${installed[bmv2]:-} && ! -f $PREFIX/include/PI/pi.h ]]; then
        unset 'installed[pi]'
        REASON[pi]="$PREFIX has PI's libraries but not its headers, which BMv2's build needs"
    fi
    for comp in "${COMPONENTS[@]}"; do
        [[ -n ${installed[$comp]:-} ]] || INSTALL+=("$comp")
    done
    ((${#INSTALL[@]} == 0)) || probe_prebuilt "${INSTALL[@]}"
    for comp in "${INSTALL[@]}"; do
        [[ -z ${PREBUILT[$comp]:-} ]] || continue
        # PI is only there for BMv2: p4lang-bmv2 depends on p4lang-pi.
        if [[ $comp == pi && -n ${PREBUILT[bmv2]:-} ]]; then
            REASON[pi]="comes with ${PREBUILT[bmv2]} (its dependency p4lang-pi)"
            continue
        fi
        SOURCE+=("$comp")
        if [[ -n $TOOLCHAIN_SRC ]]; then
            for c in $(sources_of "$comp"); do
                problem=$(check_local_source "$c")
                [[ -z $problem ]] || PROBLEMS+=("$(label "$comp"): $problem")
            done
        fi
    done
}

in_list() {
    local want=$1 x
    shift
    for x in "$@"; do [[ $x == "$want" ]] && return 0; done
    return 1
}

print_plan() {
    local comp estimate=0 measured=""
    say "PREFIX=$PREFIX JOBS=$JOBS TOOLCHAIN_WORK=$TOOLCHAIN_WORK${TOOLCHAIN_SRC:+ TOOLCHAIN_SRC=$TOOLCHAIN_SRC}"
    for comp in "${COMPONENTS[@]}"; do
        if [[ -n ${PREBUILT[$comp]:-} ]]; then
            say "$(label "$comp"): install ${PREBUILT[$comp]} from ${TOOLCHAIN_REPO%/}/ (${REASON[$comp]})"
        elif in_list "$comp" "${SOURCE[@]}"; then
            say "$(label "$comp"): build $(wanted_version "$comp") from $(source_desc "$comp") (${REASON[$comp]})"
            [[ $comp != p4c ]] || say "  p4c's P4Runtime from $(source_desc p4runtime)"
            estimate=$((estimate + MEASURED_S[$comp]))
            measured+="${measured:+, }$(label "$comp") $(fmt_duration "${MEASURED_S[$comp]}")"
        else
            say "$(label "$comp"): skip, ${REASON[$comp]}"
        fi
    done
    if ((${#PREBUILT[@]})); then
        say "way: p4lang's prebuilt packages (${PREBUILT[*]}) with apt-get: a few minutes, mostly downloads"
    fi
    if ((${#SOURCE[@]})); then
        say "way: build from the pinned sources, not p4lang's packages (${PREBUILT_WHY:-not offered})"
        say "  about $(fmt_duration "$estimate") with 2 cores (measured: $measured), plus the Debian" \
            "build dependencies' downloads; JOBS=$JOBS here"
    fi
    if ((${#INSTALL[@]} == 0)); then
        say "nothing to install (TOOLCHAIN_FORCE=1 rebuilds)"
    fi
}

# Why this run, not root, cannot install; nothing when it can.
cannot_install() {
    local -a missing=()
    [[ $(id -u) != 0 ]] || return 0
    if ((${#PREBUILT[@]})); then
        echo "installing p4lang's packages takes root: sudo make toolchain (or, to build from" \
            "source without root, TOOLCHAIN_PREBUILT=0 PREFIX=\$HOME/p4 make toolchain)"
        return
    fi
    ((${#SOURCE[@]})) || return 0
    if ! { mkdir -p "$PREFIX" 2>/dev/null && [[ -w $PREFIX ]]; }; then
        echo "cannot write to PREFIX=$PREFIX: sudo make toolchain, or choose another PREFIX" \
            "(PREFIX=\$HOME/p4 make toolchain, with the Debian build dependencies installed)"
        return
    fi
    mapfile -t missing < <(missing_packages $(needed_packages "${SOURCE[@]}"))
    if ((${#missing[@]})); then
        echo "the build needs Debian packages only root can install: sudo apt-get install -y" \
            "--no-install-recommends ${missing[*]}"
    fi
}

install_all() {
    local comp start
    local -A took=()
    if ((${#SOURCE[@]})); then
        mkdir -p "$LOGS" "$TOOLCHAIN_WORK/src" "$TOOLCHAIN_WORK/build" ||
            die "cannot create $TOOLCHAIN_WORK"
        install_deps "${SOURCE[@]}"
    fi
    if ((${#PREBUILT[@]})); then
        mkdir -p "$LOGS" || die "cannot create $LOGS"
        start=$SECONDS
        install_prebuilt
        say "p4lang's packages installed in $(fmt_duration $((SECONDS - start))) (log: $LOGS/prebuilt.log)"
    fi
    for comp in "${SOURCE[@]}"; do
        start=$SECONDS
        : >"$LOGS/$comp.log"
        fetch_sources "$comp"
        "build_$comp"
        write_stamp "$comp" "$(wanted_version "$comp")" "$(source_desc "$comp")"
        took[$comp]=$((SECONDS - start))
        say "$(label "$comp") built and installed in $(fmt_duration "${took[$comp]}") (log: $LOGS/$comp.log)"
    done
    for comp in "${COMPONENTS[@]}"; do
        if [[ -n ${took[$comp]:-} ]]; then
            say "$(label "$comp") built and installed in $(fmt_duration "${took[$comp]}")"
        elif [[ -n ${PREBUILT[$comp]:-} ]]; then
            say "$(label "$comp") installed from ${PREBUILT[$comp]}"
        else
            say "$(label "$comp") skipped: ${REASON[$comp]}"
        fi
    done
    say "total $(fmt_duration $((SECONDS - SCRIPT_START)))"
}

main() {
    local dry_run=0 ensure=0 problem why
    local -a missing=()
    while (($#)); do
        case $1 in
            -h | --help) usage; exit 0 ;;
            -n | --dry-run) dry_run=1 ;;
            --ensure) ensure=1 ;;
            *) usage >&2; DIE_STATUS=2 die "unknown argument: $1" ;;
        esac
        shift
    done
    read_config
    if ((ensure)) && [[ $TOOLCHAIN_FORCE != 1 ]] && tools_ready; then
        say "p4c and simple_switch_grpc at the pinned versions on PATH: $READY_DESC; nothing to do"
        exit 0
    fi
    export_prefix_env
    make_plan
    print_plan
    if ((${#PROBLEMS[@]})); then
        for problem in "${PROBLEMS[@]}"; do say "problem: $problem"; done
        DIE_STATUS=2 die "cannot build from TOOLCHAIN_SRC=$TOOLCHAIN_SRC (nothing was changed)"
    fi
    if ((dry_run)); then
        if ((${#SOURCE[@]})); then
            mapfile -t missing < <(needed_packages "${SOURCE[@]}")
            mapfile -t missing < <(missing_packages "${missing[@]}")
            say "Debian build dependencies missing: ${missing[*]:-none}"
        fi
        say "dry run: nothing installed"
        exit 0
    fi
    ((${#INSTALL[@]})) || { check_toolchain; exit 0; }
    why=$(cannot_install)
    if [[ -n $why ]]; then
        # ensure-toolchain goes on (make test: the tests that need the tools skip).
        ((ensure)) && { say "not root: $why; going on without the P4 tools"; exit 0; }
        die "$why"
    fi
    install_all
    check_toolchain
}

main "$@"
exit
