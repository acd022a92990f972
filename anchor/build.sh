#!/bin/sh
# Builds, from the Go module proxy into .cache/anchor/, kube-apiserver (the k8s.io/kubernetes release
# anchor/go.mod requires) and etcd (the release anchor/etcd/go.mod requires), each unless the binary
# there is newer than its go.mod and go.sum. The first build of kube-apiserver compiles all of
# Kubernetes' server code: about 25 minutes on 2 busy cores; etcd's about 5 (Go's build cache keeps
# the rest). GO names the go command (default /usr/local/go/bin/go, else the PATH's; Go 1.24 or newer).
set -eu
cd "$(dirname "$0")"
if [ -z "${GO:-}" ]; then
	if [ -x /usr/local/go/bin/go ]; then GO=/usr/local/go/bin/go; else GO=go; fi
fi
export GOTOOLCHAIN=auto GOFLAGS="-trimpath -mod=readonly" CGO_ENABLED=0
cache=$(pwd)/../.cache/anchor
mkdir -p "$cache"

# build MODULE_DIR PACKAGE BINARY LDFLAGS
build() {
	if [ -x "$cache/$3" ] && [ "$cache/$3" -nt "$1/go.mod" ] && [ "$cache/$3" -nt "$1/go.sum" ]; then
		return 0
	fi
	echo "building $2 into .cache/anchor/$3 (a first build takes long)"
	(cd "$1" && nice "$GO" build -ldflags "$4" -o "$cache/$3.tmp" "$2")
	mv "$cache/$3.tmp" "$cache/$3"
}

version=$("$GO" list -m -f '{{.Version}}' k8s.io/kubernetes)
minor=$(echo "$version" | cut -d. -f2)
flags="-s -w"
for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
	flags="$flags -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
	flags="$flags -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done
build . k8s.io/kubernetes/cmd/kube-apiserver kube-apiserver "$flags"
build etcd go.etcd.io/etcd/server/v3 etcd "-s -w"
