#!/usr/bin/env bash
# Builds .cache/bin/kapi-go-client (test/e2e/fixtures/go-client/main.go): a client-go program the
# end-to-end tests run against kapi. Everything comes from Debian: Go 1.19 (golang-1.19-go and
# golang-1.19-src, unpacked into .cache/go) and client-go as vendored in Debian's kubernetes source
# package (`apt-get source`, which needs a deb-src line: added as root when missing), built in GOPATH
# mode. Idempotent: rebuilt only when main.go changes.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cache=$root/.cache
bin=$cache/bin/kapi-go-client
src=test/e2e/fixtures/go-client/main.go
stamp=$(sha256sum "$src" | cut -d' ' -f1)
if [ -x "$bin" ] && [ "$(cat "$bin.sha256" 2>/dev/null)" = "$stamp" ]; then exit 0; fi
mkdir -p "$cache/bin"

as_root() { [ "$(id -u)" = 0 ] || { echo "go-client.sh: $* needs root (or a prepared .cache)" >&2; exit 1; }; }

# Go 1.19 from Debian, unpacked (not installed).
goroot=$cache/go/usr/lib/go-1.19
if [ ! -x "$goroot/bin/go" ]; then
  tmp=$(mktemp -d)
  if ! (cd "$tmp" && apt-get download golang-1.19-go golang-1.19-src >/dev/null 2>&1); then
    as_root "refreshing the package lists"
    apt-get update -qq >/dev/null
    (cd "$tmp" && apt-get download golang-1.19-go golang-1.19-src >/dev/null)
  fi
  rm -rf "$cache/go"
  for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$cache/go"; done
  rm -rf "$tmp"
  echo "unpacked Debian's Go $("$goroot/bin/go" version | cut -d' ' -f3) into .cache/go"
fi

# client-go, apimachinery and api as Debian's kubernetes source package vendors them.
gopath=$cache/gopath
k8s=$gopath/src/k8s.io/kubernetes
if [ ! -d "$k8s/vendor/k8s.io/client-go" ]; then
  tmp=$(mktemp -d)
  if ! (cd "$tmp" && apt-get source --download-only kubernetes >/dev/null 2>&1); then
    as_root "adding a deb-src line for Debian's kubernetes source"
    if ! grep -rqs '^Types: deb-src' /etc/apt/sources.list.d/ && ! grep -qs '^deb-src' /etc/apt/sources.list; then
      printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' >/etc/apt/sources.list.d/kapi-deb-src.sources
    fi
    apt-get update -qq >/dev/null
    (cd "$tmp" && apt-get source --download-only kubernetes >/dev/null 2>&1)
  fi
  rm -rf "$k8s"
  mkdir -p "$k8s"
  tar xzf "$tmp"/kubernetes_*.orig.tar.gz -C "$k8s" --strip-components=1 --wildcards '*/vendor/*' '*/staging/*'
  rm -rf "$tmp"
  echo "unpacked client-go from Debian's kubernetes source into .cache/gopath"
fi

mkdir -p "$k8s/cmd/kapi-go-client"
cp "$src" "$k8s/cmd/kapi-go-client/main.go"
(cd "$k8s" && GO111MODULE=off GOPATH=$gopath GOCACHE=$cache/go-build GOFLAGS= CGO_ENABLED=0 GOTOOLCHAIN=local \
  "$goroot/bin/go" build -o "$bin" ./cmd/kapi-go-client)
echo "$stamp" >"$bin.sha256"
echo "built $bin"
