#!/bin/sh
# test-container.sh: build the runtime image and run test/container against
# it, as users run it (make test-container).
#
# With a Docker engine (`docker info` answers) it uses docker. Without one it
# uses podman, after ../shared/tools/container-base-images.sh (beside the
# repository; override with AGENTMEM_SHARED) has made the Dockerfile's base
# images locally — that needs root, and is idempotent (seconds once done).
#
# Environment:
#   AGENTMEM_ENGINE   docker or podman (default: docker if an engine answers)
#   AGENTMEM_IMAGE    image tag to build and test (default localhost/agentmem:test)
#   AGENTMEM_SHARED   the shared/ directory (default: ../shared beside the repo)
#   GO                the go command (default go)
#
# Containers and volumes the tests make are removed by the tests (and, after
# an interrupted run, by the label sweep below); the image stays cached.
set -eu
ROOT=$(git rev-parse --show-toplevel)
cd "$ROOT"
GO=${GO:-go}
IMAGE=${AGENTMEM_IMAGE:-localhost/agentmem:test}

if [ -z "${AGENTMEM_ENGINE:-}" ]; then
	if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
		AGENTMEM_ENGINE=docker
	else
		AGENTMEM_ENGINE=podman
	fi
fi

case $AGENTMEM_ENGINE in
docker)
	build() { DOCKER_BUILDKIT=1 docker build "$@"; }
	;;
podman)
	SHARED=${AGENTMEM_SHARED:-$ROOT/../shared}
	tool=$SHARED/tools/container-base-images.sh
	[ -f "$tool" ] || { echo "test-container.sh: no Docker engine and no $tool" >&2; exit 1; }
	sh "$tool" Dockerfile >/tmp/agentmem-container-base-images.log 2>&1 || {
		tail -20 /tmp/agentmem-container-base-images.log >&2; exit 1; }
	# shellcheck disable=SC1091
	. "${WORKDIR:-/var/tmp/agentmem-podman}/env"
	# --format docker: the OCI format, podman's default, has no HEALTHCHECK
	# and drops the Dockerfile's (with a warning).
	build() { podman build --pull=never --isolation chroot --format docker "$@"; }
	;;
*)
	echo "test-container.sh: AGENTMEM_ENGINE must be docker or podman" >&2; exit 1
	;;
esac
export AGENTMEM_ENGINE AGENTMEM_IMAGE="$IMAGE"

# Leftovers of an interrupted run (the tests label everything they make).
sweep() {
	ids=$($AGENTMEM_ENGINE ps -aq --filter label=agentmem-test) && [ -z "$ids" ] ||
		$AGENTMEM_ENGINE rm -f $ids >/dev/null
	vols=$($AGENTMEM_ENGINE volume ls -q --filter label=agentmem-test) && [ -z "$vols" ] ||
		$AGENTMEM_ENGINE volume rm -f $vols >/dev/null
}
sweep
trap sweep EXIT

t0=$(date +%s)
VERSION=$(git describe --tags --always --dirty 2>/dev/null || echo devel)
build --target runtime --build-arg VERSION="$VERSION" -t "$IMAGE" .
t1=$(date +%s)
$GO vet -tags container ./test/container/
$GO test -tags container -count=1 -timeout 8m -v ./test/container/
t2=$(date +%s)
echo "test-container: image build $((t1 - t0))s, tests $((t2 - t1))s ($AGENTMEM_ENGINE, $IMAGE)"
