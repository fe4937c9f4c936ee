#!/bin/sh
# Entry point of the compose services that build Mininet networks (docker-compose.yml:
# fabric, run). The engine mounts /proc/sys read-only in a container that is not
# privileged; the launcher turns IPv6 off on every veth with sysctl, so /proc/sys is
# remounted read-write first (needs CAP_SYS_ADMIN, which these services get). Then the
# service's command runs.
set -e
if [ ! -w /proc/sys/net/ipv6/conf/all/disable_ipv6 ]; then
    mount -o remount,rw /proc/sys
fi
exec "$@"
