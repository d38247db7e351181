#!/usr/bin/env bash
# Builds the real control plane the end-to-end tests run against kapi: kube-controller-manager and
# kube-scheduler from Debian's kubernetes source package with Debian's Go (scripts/k8s-source.sh), into
# .cache/bin, stamped with the source's version (`--version` says v1.20.2). Idempotent: rebuilt only when this
# script or the source changes. A fresh build takes some 4 minutes on 2 cores (the client-go packages the Go test
# client compiled are reused from .cache/go-build).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/k8s-source.sh

version=$(cat "$k8s/.kapi-version")
version=v${version##*really} # Debian's 1.20.5+really1.20.2 is 1.20.2
version=${version%%-*}
stamp="$version $(sha256sum scripts/control-plane.sh scripts/k8s-source.sh | cut -d' ' -f1 | tr '\n' ' ')"
out=$cache/bin
if [ -x "$out/kube-controller-manager" ] && [ -x "$out/kube-scheduler" ] && [ "$(cat "$out/control-plane.stamp" 2>/dev/null)" = "$stamp" ]; then exit 0; fi

major=${version#v}
minor=${major#*.}
minor=${minor%%.*}
major=${major%%.*}
pkg=k8s.io/kubernetes/vendor/k8s.io/component-base/version
flags="-s -w -X $pkg.gitVersion=$version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=archive"
started=$(date +%s)
go_build -ldflags "$flags" -o "$out/" ./cmd/kube-controller-manager ./cmd/kube-scheduler
echo "$stamp" >"$out/control-plane.stamp"
echo "built kube-controller-manager and kube-scheduler $version into .cache/bin in $(($(date +%s) - started)) s"
