#!/bin/sh
# install-faiss.sh: install what `go build -tags faiss` needs on Debian
# bookworm: Faiss 1.7.3 (static libfaiss.a and headers, C++ API only), an
# optimised BLAS/LAPACK (OpenBLAS, pthread build) and the C++ toolchain cgo
# uses. The Dockerfile's build stage and .ci/run (via `make faiss-deps`) both
# run this script, so CI exercises the same install as the image.
#
# Idempotent: when every package is already installed it does nothing (and
# needs neither root nor the network). Otherwise it needs root (or sudo) and
# apt access.
#
#   sh scripts/install-faiss.sh           # install what is missing
#   sh scripts/install-faiss.sh --check   # exit 1 if something is missing
set -eu

# libfaiss-dev   libfaiss.a + /usr/include/faiss (links -lfaiss)
# libopenblas-dev  BLAS + LAPACK for Faiss (-lopenblas); pulls libopenblas0-pthread
# libgomp1       OpenMP runtime Faiss is built with (-lgomp)
# g++            cgo compiles shim.cpp with it; pulls libstdc++-12-dev
PACKAGES="libfaiss-dev libopenblas-dev libgomp1 g++"

missing=""
for p in $PACKAGES; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done

if [ -z "$missing" ]; then
	echo "install-faiss: all present ($PACKAGES)"
	exit 0
fi
if [ "${1:-}" = "--check" ]; then
	echo "install-faiss: missing:$missing" >&2
	exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO="sudo"
	else
		echo "install-faiss: need root to install:$missing" >&2
		exit 1
	fi
fi

if ! grep -qs 'bookworm' /etc/os-release; then
	echo "install-faiss: warning: written for Debian bookworm (Faiss 1.7.3); continuing" >&2
fi

echo "install-faiss: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
# shellcheck disable=SC2086 # word splitting of the package list is intended
$SUDO apt-get install -y --no-install-recommends $missing

# Check the result the way the Go build will use it.
test -f /usr/include/faiss/Index.h
test -n "$(find /usr/lib -name libfaiss.a -print -quit)"
echo "install-faiss: done"
