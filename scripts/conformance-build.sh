#!/usr/bin/env bash
# Builds what `npm run conformance` runs: the 1.20 e2e suite (e2e.test) and, as the reference, kube-apiserver,
# from Debian's kubernetes source with Debian's Go (scripts/k8s-source.sh), into .cache/bin. The source package
# is fetched again for the parts k8s-source.sh leaves out (test/, the code generators' inputs); the files
# upstream's `make` generates are made as it makes them: test/e2e/generated/bindata.go with the vendored
# go-bindata, the three zz_generated.openapi.go with the vendored openapi-gen. Idempotent (a stamp); a fresh
# build takes some minutes on 2 cores (most packages are in .cache/go-build once the control plane is built).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/k8s-source.sh

out=$cache/bin
stamp="$(cat "$k8s/.kapi-version") $(sha256sum scripts/conformance-build.sh scripts/k8s-source.sh | cut -d' ' -f1 | tr '\n' ' ')"
if [ -x "$out/e2e.test" ] && [ -x "$out/kube-apiserver" ] && [ "$(cat "$out/conformance.stamp" 2>/dev/null)" = "$stamp" ]; then exit 0; fi
started=$(date +%s)

if [ ! -f "$k8s/.kapi-unpacked-e2e" ]; then
  tmp=$(mktemp -d)
  (cd "$tmp" && apt-get source --download-only kubernetes >/dev/null 2>&1)
  tar xzf "$tmp"/kubernetes_*.orig.tar.gz -C "$k8s" --strip-components=1 --wildcards '*/test/*' '*/hack/boilerplate/*' '*/api/api-rules/*'
  rm -rf "$tmp"
  touch "$k8s/.kapi-unpacked-e2e"
fi

go_tool() { (cd "$k8s" && GO111MODULE=off GOPATH=$gopath GOCACHE=$cache/go-build GOFLAGS= CGO_ENABLED=0 GOTOOLCHAIN=local "$goroot/bin/go" "$@"); }
tools=$cache/conformance-tools
mkdir -p "$tools"
go_tool build -o "$tools/" ./vendor/github.com/go-bindata/go-bindata/go-bindata ./vendor/k8s.io/kube-openapi/cmd/openapi-gen

# hack/generate-bindata.sh
(cd "$k8s" && "$tools/go-bindata" -nometadata -o test/e2e/generated/bindata.go -pkg generated \
  -ignore .jpg -ignore .png -ignore .md -ignore 'BUILD(\.bazel)?' \
  "test/conformance/testdata/..." "test/e2e/testing-manifests/..." "test/e2e_node/testing-manifests/..." "test/images/..." "test/fixtures/...")

# build/root/Makefile.generated_files: gen_openapi, for the packages that ask for it (+k8s:openapi-gen=)
tagged=$(cd "$k8s" && grep -Rl --include='*.go' '+k8s:openapi-gen=' pkg cmd vendor/k8s.io/ | grep -v -e '_test.go$' -e '/testdata/' -e '/code-generator/' -e '/sample-apiserver/')
openapi() { # regex of the tagged files, output package
  local dirs
  dirs=$(echo "$tagged" | grep -E "$1" | xargs -n1 dirname | LC_ALL=C sort -u | sed 's#^#k8s.io/kubernetes/#' | paste -sd, -)
  (cd "$k8s" && GO111MODULE=off GOPATH=$gopath "$tools/openapi-gen" -i "$dirs" -p "k8s.io/kubernetes/$2" -O zz_generated.openapi \
    -h hack/boilerplate/boilerplate.generatego.txt -r "$tools/violations.report")
}
defaults='^vendor/k8s.io/apimachinery/pkg/(apis/meta/v1|runtime|version)/'
openapi '^(pkg|cmd|vendor/k8s.io)/' pkg/generated/openapi
openapi "$defaults|^vendor/k8s.io/kube-aggregator/" vendor/k8s.io/kube-aggregator/pkg/generated/openapi
openapi "$defaults|^vendor/k8s.io/apiextensions-apiserver/|^vendor/k8s.io/api/autoscaling/v1/" vendor/k8s.io/apiextensions-apiserver/pkg/generated/openapi

version=$(cat "$k8s/.kapi-version")
version=v${version##*really}
version=${version%%-*}
minor=${version#v1.}
minor=${minor%%.*}
# As hack/lib/version.sh stamps them: component-base's (the commands' --version) and client-go's (kube-apiserver's /version).
flags="-s -w"
for pkg in k8s.io/kubernetes/vendor/k8s.io/component-base/version k8s.io/kubernetes/vendor/k8s.io/client-go/pkg/version; do
  flags="$flags -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=archive"
done
go_tool test -c -ldflags "$flags" -o "$out/e2e.test" ./test/e2e
go_build -ldflags "$flags" -o "$out/" ./cmd/kube-apiserver
echo "$stamp" >"$out/conformance.stamp"
echo "built e2e.test and kube-apiserver $version into .cache/bin in $(($(date +%s) - started)) s"
