#!/usr/bin/env bash
# readme-steps.sh: follow the README's set-up on a clean machine — a fresh
# clone of this repository in a new golang:1.26-bookworm container — and
# print how long each of its two commands took.
#
#   scripts/readme-steps.sh          # command 1 (import and search), then command 2 (make test-all)
#   scripts/readme-steps.sh 1        # command 1 only
#
# The clone is of the repository's committed HEAD (mounted read-only), so
# commit first. Uses podman (after ../shared/tools/container-base-images.sh
# and `. /var/tmp/agentmem-podman/env` where there is no registry) or docker,
# with the host's network for the Go module proxy and Debian's archive.
# Command 2 installs packages inside the container (it runs as root there)
# and takes about half an hour on 2 cores. Nothing is left behind: each
# command runs in a container removed afterwards.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
IMAGE=${IMAGE:-docker.io/library/golang:1.26-bookworm}
ENGINE=${ENGINE:-$(command -v podman || command -v docker || true)}
[ -n "$ENGINE" ] || {
	echo "readme-steps: needs podman or docker" >&2
	exit 1
}
PULL=()
[ "$(basename "$ENGINE")" = podman ] && PULL=(--pull=never)

# step N CMD runs CMD from a fresh clone in a new container and prints its time.
step() {
	local n=$1 cmd=$2
	echo "readme-steps: command $n: $cmd" >&2
	"$ENGINE" run --rm "${PULL[@]}" --network host -v "$ROOT:/src.git:ro" "$IMAGE" bash -euo pipefail -c "
git config --global --add safe.directory '*'
git clone -q /src.git /root/agentmem && cd /root/agentmem
echo \"readme-steps: clone of \$(git log --oneline -1), \$(nproc) cores, \$(go version)\" >&2
t0=\$(date +%s)
$cmd
echo \"readme-steps: command $n took \$((\$(date +%s) - t0)) s\" >&2
"
}

step 1 'go run ./cmd/agentmem import testdata/conversation.jsonl && go run ./cmd/agentmem search "when is my flight to Berlin?"'
[ "${1:-}" = 1 ] || step 2 'make test-all'
