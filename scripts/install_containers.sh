#!/usr/bin/env bash
# A container runtime for the tasks that ship an image, and the offline base image they
# build FROM: podman with runc, installed from Debian's packages when missing (and we
# may), configured by scripts/containers.conf, and a Debian bookworm root (minbase plus
# python3) made by debootstrap from the machine's own Debian mirror and imported as
# $CAMPAIGN_BASE_IMAGE. Nothing is pulled from an image registry. Idempotent: an image
# already in podman's store is kept. Prints the base image's name last.
set -euo pipefail
cd "$(dirname "$0")/.."
export CONTAINERS_CONF="$PWD/scripts/containers.conf"
# Bump the tag when the recipe below changes, so a machine rebuilds it.
image=${CAMPAIGN_BASE_IMAGE:-localhost/campaign-base:bookworm-python3-1}
if ! command -v podman >/dev/null || ! command -v runc >/dev/null || ! command -v debootstrap >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman runc debootstrap >/dev/null) || true
  fi
fi
if ! command -v podman >/dev/null || ! command -v runc >/dev/null; then
  echo "install_containers.sh: podman and runc are not installed, and cannot be here" >&2
  exit 1
fi
if ! podman image exists "$image"; then
  command -v debootstrap >/dev/null || { echo "install_containers.sh: no debootstrap to make the base image" >&2; exit 1; }
  # The mirror apt already uses: the only registry these machines reach.
  mirror=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
  root=$(mktemp -d /tmp/campaign-base.XXXXXX)
  trap 'rm -rf "$root"' EXIT
  if ! debootstrap --variant=minbase --include=python3 bookworm "$root/rootfs" "${mirror:-http://deb.debian.org/debian}" >"$root/log" 2>&1; then
    echo "install_containers.sh: debootstrap failed: $(tail -n 1 "$root/log")" >&2
    exit 1
  fi
  tar -C "$root/rootfs" -c . | podman import --quiet - "$image" >/dev/null
fi
# The runtime must start a container here, not only be installed.
if ! out=$(podman run --rm --network none "$image" true 2>&1); then
  echo "install_containers.sh: podman cannot start a container here: $(tail -n 1 <<<"$out")" >&2
  exit 1
fi
echo "$image"
