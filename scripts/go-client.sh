#!/usr/bin/env bash
# Builds .cache/bin/kapi-go-client (test/e2e/fixtures/go-client/main.go): a client-go program the
# end-to-end tests run against kapi. Everything comes from Debian (scripts/k8s-source.sh): Go 1.19 and
# client-go as vendored in Debian's kubernetes source package, built in GOPATH mode. Idempotent: rebuilt
# only when main.go changes.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cache=$root/.cache
bin=$cache/bin/kapi-go-client
src=test/e2e/fixtures/go-client/main.go
stamp=$(sha256sum "$src" | cut -d' ' -f1)
if [ -x "$bin" ] && [ "$(cat "$bin.sha256" 2>/dev/null)" = "$stamp" ]; then exit 0; fi
mkdir -p "$cache/bin"

source scripts/k8s-source.sh

mkdir -p "$k8s/cmd/kapi-go-client"
cp "$src" "$k8s/cmd/kapi-go-client/main.go"
go_build -o "$bin" ./cmd/kapi-go-client
echo "$stamp" >"$bin.sha256"
echo "built $bin"
