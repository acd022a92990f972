#!/bin/sh
# Builds kube-apiserver (the version go.mod requires) from the Go module proxy into
# .cache/anchor/kube-apiserver, unless the one there is that version. The first build compiles all
# of Kubernetes' server code: about 40 minutes on 2 shared cores (Go's build cache keeps the rest).
# GO names the go command (default /usr/local/go/bin/go, else the PATH's; Go 1.24 or newer).
set -eu
cd "$(dirname "$0")"
if [ -z "${GO:-}" ]; then
	if [ -x /usr/local/go/bin/go ]; then GO=/usr/local/go/bin/go; else GO=go; fi
fi
export GOTOOLCHAIN=auto GOFLAGS="-trimpath -mod=readonly" CGO_ENABLED=0
out=../.cache/anchor/kube-apiserver
version=$("$GO" list -m -f '{{.Version}}' k8s.io/kubernetes)
if [ -x "$out" ] && [ "$("$out" --version 2>/dev/null)" = "Kubernetes $version" ]; then
	exit 0
fi
minor=$(echo "$version" | cut -d. -f2)
flags="-s -w"
for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
	flags="$flags -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
	flags="$flags -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done
mkdir -p ../.cache/anchor
echo "building kube-apiserver $version into .cache/anchor (a first build takes long)"
nice "$GO" build -ldflags "$flags" -o "$out.tmp" k8s.io/kubernetes/cmd/kube-apiserver
mv "$out.tmp" "$out"
"$out" --version
