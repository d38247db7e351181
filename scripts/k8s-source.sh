#!/usr/bin/env bash
# Sourced by go-client.sh and control-plane.sh: Debian's Go 1.19 (golang-1.19-go and golang-1.19-src, unpacked
# into .cache/go) and Debian's kubernetes source package (`apt-get source`, which needs a deb-src line: added as
# root when missing) unpacked into a GOPATH (.cache/gopath/src/k8s.io/kubernetes), with the vendored
# modern-go/reflect2 replaced by Debian's v1.0.2 (v1.0.1 breaks on Go >= 1.18). Sets $goroot, $gopath, $k8s and
# go_build (GOPATH mode, no cgo, the build cache in .cache/go-build). Each step runs once.
root=$PWD
cache=$root/.cache
mkdir -p "$cache/bin"

as_root() { [ "$(id -u)" = 0 ] || { echo "k8s-source.sh: $* needs root (or a prepared .cache)" >&2; exit 1; }; }

# apt-get download of packages, refreshing the lists (as root) when a download fails.
apt_download() { # dir, packages...
  local dir=$1
  shift
  if ! (cd "$dir" && apt-get download "$@" >/dev/null 2>&1); then
    as_root "refreshing the package lists"
    apt-get update -qq >/dev/null
    (cd "$dir" && apt-get download "$@" >/dev/null)
  fi
}

goroot=$cache/go/usr/lib/go-1.19
if [ ! -x "$goroot/bin/go" ]; then
  tmp=$(mktemp -d)
  apt_download "$tmp" golang-1.19-go golang-1.19-src
  rm -rf "$cache/go"
  for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$cache/go"; done
  rm -rf "$tmp"
  echo "unpacked Debian's Go $("$goroot/bin/go" version | cut -d' ' -f3) into .cache/go"
fi

gopath=$cache/gopath
k8s=$gopath/src/k8s.io/kubernetes
# The Go packages of the source (the commands, their packages and the vendored modules); a tree unpacked by an
# older version of this script had vendor and staging only.
if [ ! -f "$k8s/.kapi-unpacked" ]; then
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
  tar xzf "$tmp"/kubernetes_*.orig.tar.gz -C "$k8s" --strip-components=1 --wildcards '*/vendor/*' '*/staging/*' '*/cmd/*' '*/pkg/*' '*/plugin/*' '*/third_party/*'
  basename "$tmp"/kubernetes_*.orig.tar.gz | sed -E 's/^kubernetes_(.*)\.orig\.tar\.gz$/\1/' >"$k8s/.kapi-version"
  apt_download "$tmp" golang-github-modern-go-reflect2-dev
  dpkg -x "$tmp"/golang-github-modern-go-reflect2-dev_*.deb "$tmp/reflect2"
  rm -rf "$k8s/vendor/github.com/modern-go/reflect2"
  cp -r "$tmp/reflect2/usr/share/gocode/src/github.com/modern-go/reflect2" "$k8s/vendor/github.com/modern-go/reflect2"
  rm -f "$k8s"/vendor/github.com/modern-go/reflect2/*_test.go
  rm -rf "$tmp"
  touch "$k8s/.kapi-unpacked"
  echo "unpacked Debian's kubernetes source $(cat "$k8s/.kapi-version") into .cache/gopath"
fi

go_build() { # go build arguments
  (cd "$k8s" && GO111MODULE=off GOPATH=$gopath GOCACHE=$cache/go-build GOFLAGS= CGO_ENABLED=0 GOTOOLCHAIN=local "$goroot/bin/go" build "$@")
}
