#!/usr/bin/env bash
# Installs the programs the end-to-end tests drive, into .cache/bin (idempotent):
# kubectl from Debian's kubernetes-client package, etcd (3.4) from etcd-server
# and etcdctl from etcd-client; gcc, python3-kubernetes and chromium from Debian when missing; the Go test client, and
# kube-controller-manager and kube-scheduler built from Debian's kubernetes source (go-client.sh, control-plane.sh). Needs Debian's package lists; as root it
# refreshes them when a download fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=.cache/bin
mkdir -p "$bin"

fetch_deb() { # package, file inside it, destination name
  local pkg=$1 path=$2 name=$3
  [ -x "$bin/$name" ] && return 0
  local tmp
  tmp=$(mktemp -d)
  if ! (cd "$tmp" && apt-get download "$pkg" >/dev/null 2>&1); then
    if [ "$(id -u)" = 0 ]; then apt-get update -qq >/dev/null; fi
    (cd "$tmp" && apt-get download "$pkg" >/dev/null)
  fi
  dpkg -x "$tmp"/*.deb "$tmp/root"
  cp "$tmp/root/$path" "$bin/$name"
  rm -rf "$tmp"
  echo "installed $name from Debian's $pkg into $bin"
}

# gcc builds the durability test's LD_PRELOAD shim (test/storage/fixtures/fsync-snapshot.c).
if ! command -v gcc >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y -qq gcc libc6-dev >/dev/null 2>&1 || { apt-get update -qq >/dev/null; apt-get install -y -qq gcc libc6-dev >/dev/null; }
  else
    echo "gcc is needed for the durability test: apt-get install gcc libc6-dev" >&2
    exit 1
  fi
fi

# openssl makes the certificates of the TLS, client-certificate and webhook tests.
if ! command -v openssl >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y -qq openssl >/dev/null 2>&1 || { apt-get update -qq >/dev/null; apt-get install -y -qq openssl >/dev/null; }
  else
    echo "the TLS tests need openssl: apt-get install openssl" >&2
    exit 1
  fi
fi

# The official Python client, as Debian packages it (the e2e tests drive it with the system's python3).
if ! /usr/bin/python3 -c 'import kubernetes' >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y -qq python3-kubernetes >/dev/null 2>&1 || { apt-get update -qq >/dev/null; apt-get install -y -qq python3-kubernetes >/dev/null; }
    echo "installed Debian's python3-kubernetes"
  else
    echo "the Python client tests need Debian's python3-kubernetes: apt-get install python3-kubernetes" >&2
    exit 1
  fi
fi

# Debian's Chromium, which the console's browser tests drive through playwright-core (no browser download).
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y -qq chromium >/dev/null 2>&1 || { apt-get update -qq >/dev/null; apt-get install -y -qq chromium >/dev/null; }
    echo "installed Debian's chromium"
  else
    echo "the console's browser tests need Debian's chromium: apt-get install chromium" >&2
    exit 1
  fi
fi

fetch_deb kubernetes-client usr/bin/kubectl kubectl
fetch_deb etcd-server usr/bin/etcd etcd
fetch_deb etcd-client usr/bin/etcdctl etcdctl
bash scripts/go-client.sh
bash scripts/control-plane.sh
