#!/usr/bin/env bash
# Builds the local Debian 12 base image that docker/Dockerfile starts FROM.
# No image registry is needed: mmdebstrap makes the root filesystem from Debian's mirrors
# and `docker import` turns it into an image (mrc-testbed/debian:12).
set -euo pipefail
image=${1:-mrc-testbed/debian:12}
command -v mmdebstrap >/dev/null || { echo "needs mmdebstrap (apt install mmdebstrap)" >&2; exit 2; }
mmdebstrap --variant=apt --include=ca-certificates bookworm - | docker import - "$image"
echo "built $image"
