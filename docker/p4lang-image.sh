#!/usr/bin/env bash
# Imports a directory of p4lang builds (p4c, simple_switch_grpc and their libraries) as an
# image that docker/Dockerfile's `bmv2` stage copies to /opt/p4lang: for machines where
# p4lang's packages and images cannot be reached (docs/docker.md).
#
#   docker/p4lang-image.sh [BIN_DIR] [IMAGE]
#
# BIN_DIR: the builds' bin/ directory (default: $MRC_P4LANG_BIN, else the directory of
# simple_switch_grpc on PATH). Its parent must hold bin/ lib/ share/ and apt-runtime.txt (the
# Debian packages the builds need at run time). IMAGE default: mrc-testbed/p4lang-from-docker-p4lang-image.sh:local.
set -euo pipefail
fail() { echo "docker/p4lang-image.sh: $*" >&2; exit 2; }

bin=${1:-${MRC_P4LANG_BIN:-}}
image=${2:-mrc-testbed/p4lang-from-docker-p4lang-image.sh:local}
if [ -z "$bin" ]; then
    found=$(command -v simple_switch_grpc || true)
    [ -n "$found" ] || fail "no p4lang builds: give their bin/ directory, set MRC_P4LANG_BIN," \
        "or put simple_switch_grpc on PATH"
    bin=$(dirname "$(realpath "$found")")
fi
[ -d "$bin" ] || fail "$bin is not a directory"
root=$(realpath "$bin/..")
for item in bin/simple_switch_grpc bin/p4c lib share apt-runtime.txt; do
    [ -e "$root/$item" ] || fail "$root/$item is missing (expected a directory of p4lang builds:" \
        "bin/ lib/ share/ apt-runtime.txt)"
done
command -v docker >/dev/null 2>&1 || fail "'docker' not found: install a Docker engine and CLI first (docs/docker.md)"
docker info >/dev/null 2>&1 || fail "the Docker engine does not answer ('docker info' fails): start it first (docs/docker.md)"

parts=(bin lib share apt-runtime.txt)
[ -e "$root/licenses" ] && parts+=(licenses)
tar -C "$root" -c "${parts[@]}" \
    | docker import --message "p4lang builds from $root" - "$image" >/dev/null
echo "imported $root as $image"
