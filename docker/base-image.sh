#!/usr/bin/env bash
# Builds the local Debian 12 image that docker/Dockerfile starts FROM where no image
# registry can be reached: mmdebstrap makes a minimal root filesystem from Debian's mirrors
# and `docker import` turns it into an image. Where a registry is reachable, skip this and
# build with --build-arg BASE_IMAGE=debian:12 (docs/docker.md).
#
# The image trusts the certificate authorities the host trusts: the host's bundle
# (/etc/ssl/certs/ca-certificates.crt) is added as a local CA file, so image builds reach
# PyPI over HTTPS behind a TLS-intercepting proxy as the host does.
#
#   docker/base-image.sh [IMAGE]        (default IMAGE: mrc-testbed/debian:12)
set -euo pipefail
image=${1:-mrc-testbed/debian:12}
suite=bookworm
host_ca=/etc/ssl/certs/ca-certificates.crt

need() {
    command -v "$1" >/dev/null 2>&1 && return 0
    echo "docker/base-image.sh: '$1' not found: $2" >&2
    exit 2
}
need docker "install a Docker engine and CLI first (Debian: apt-get install docker.io; docs/docker.md)"
need mmdebstrap "install it first (apt-get install mmdebstrap)"
if ! docker info >/dev/null 2>&1; then
    echo "docker/base-image.sh: the Docker engine does not answer ('docker info' fails):" \
        "start it first (docs/docker.md: 'Start the engine')" >&2
    exit 2
fi
if [ "$(id -u)" != 0 ]; then
    echo "docker/base-image.sh: run as root (mmdebstrap needs root to make device nodes" \
        "and set file owners in the image)" >&2
    exit 2
fi

# The root filesystem goes to a file first, so a failed mmdebstrap never leaves a partial
# image behind (a pipe would hand docker import whatever it had written).
tarball=$(mktemp --suffix=.tar)
trap 'rm -f "$tarball"' EXIT
hooks=()
if [ -s "$host_ca" ]; then
    hooks+=(--customize-hook="cp '$host_ca' \"\$1/usr/local/share/ca-certificates/host-ca-bundle.crt\""
        --customize-hook='chroot "$1" update-ca-certificates >/dev/null')
fi
mmdebstrap --quiet --variant=apt --include=ca-certificates "${hooks[@]}" "$suite" "$tarball"
# The label lets callers (tests/test_compose.py) tell whether the image was made by this
# version of this script.
script_sha=$(sha256sum "$0" | cut -d' ' -f1)
docker import --message "Debian 12 ($suite), mmdebstrap --variant=apt" \
    --change 'CMD ["bash"]' --change "LABEL org.mrc-testbed.base-script=$script_sha" \
    "$tarball" "$image" >/dev/null
echo "built $image"
