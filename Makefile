# agentmem — build, test and benchmark targets.
#
#   make test       pure-Go tests with the race detector (no C libraries needed)
#   make test-all   the README's test command: lint, CGO_ENABLED=0 build, the race
#                   suite (vdb/pgvector's tests start a throwaway PostgreSQL), and
#                   the packages that link Faiss again with -tags faiss; installs
#                   libfaiss-dev and PostgreSQL 15 + pgvector when missing (root)
#   make bench      the README's benchmark table (pure Go, plus chromem-go in bench/)
#   make docker     the container image (needs a Docker engine)
#   make test-container
#                   builds the runtime image (docker, else podman with
#                   ../shared/tools/container-base-images.sh, as root) and runs
#                   test/container against it: the default command (serve:
#                   health check, token refusal, a write kept across a
#                   restart), named volume, Faiss backend, restart, kill -9
#                   during an import, non-root user
#                   (scripts/test-container.sh; ~10 min cold, less when cached)
#   make fuzz       every fuzz target in the module (each `func Fuzz...` in a
#                   *_test.go), one after the other, FUZZTIME each (default 10s)
#                   with -fuzzminimizetime 0; new crashers land in the
#                   package's testdata/fuzz/ as usual

GO        ?= go
PKGS      ?= ./...
RACE      ?= -race
TESTFLAGS ?=
BENCHTIME ?= 1s
FUZZTIME  ?= 10s
FAISS_TAG := -tags faiss
# VERSION is what bin/agentmem --version and its MCP server report: the
# nearest tag and the commits since (git describe), else the commit.
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS   := -X main.buildVersion=$(VERSION)

.PHONY: all
all: build

.PHONY: build
build:
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/agentmem ./cmd/agentmem

.PHONY: build-faiss
build-faiss:
	$(GO) build $(FAISS_TAG) -ldflags '$(LDFLAGS)' -o bin/agentmem ./cmd/agentmem

.PHONY: test
test:
	$(GO) test $(RACE) $(TESTFLAGS) $(PKGS)

# test-faiss runs, with -tags faiss, the packages whose code or tests link
# vdb/faiss (the rest build the same with or without the tag).
FAISS_PKGS = $$($(GO) list $(FAISS_TAG) -f '{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}' $(PKGS) | grep 'agentmem/vdb/faiss\b' | cut -d' ' -f1)

.PHONY: test-faiss
test-faiss: faiss-deps
	$(GO) test $(RACE) $(FAISS_TAG) $(TESTFLAGS) $(FAISS_PKGS)

# test-all is the README's test command and what .ci/run runs.
.PHONY: test-all
test-all: lint nocgo pg-deps test test-faiss bench-vet

# nocgo keeps the promise that the default build is pure Go.
.PHONY: nocgo
nocgo:
	CGO_ENABLED=0 $(GO) build ./...
	CGO_ENABLED=0 $(GO) vet ./...

.PHONY: lint
lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@$(MAKE) --no-print-directory lint-openapi

# lint-openapi validates the HTTP API's description against the OpenAPI 3.1
# schema (openapi-spec-validator, `pip install openapi-spec-validator`);
# server's TestOpenAPI_* check what the schema cannot (a 4XX answer on every
# operation, servers).
.PHONY: lint-openapi
lint-openapi:
	@if command -v openapi-spec-validator >/dev/null 2>&1; then openapi-spec-validator server/openapi.json; \
	else echo "lint-openapi: openapi-spec-validator not installed (pip install openapi-spec-validator): server/openapi.json not validated"; fi

.PHONY: lint-faiss
lint-faiss: faiss-deps
	$(GO) vet $(FAISS_TAG) ./...

# faiss-deps installs Debian's libfaiss-dev and BLAS when they are missing
# (the same script the Dockerfile uses). Needs root.
# pg-deps installs PostgreSQL 15 and builds pgvector when they are missing
# (scripts/pg-test.sh; needs root; pgvector's sources come from
# ../shared/vendor when present, else through the Go module proxy). The tests then
# start a throwaway cluster themselves, or use AGENTMEM_TEST_PG.
.PHONY: pg-deps
pg-deps:
	@bash scripts/pg-test.sh install

.PHONY: faiss-deps
faiss-deps:
	@sh scripts/install-faiss.sh

# bench-vet compiles and vets the separate benchmark module without running it.
.PHONY: bench-vet
bench-vet:
	cd bench && $(GO) vet ./...

.PHONY: bench
bench:
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) ./vdb/inmem/ ./embed/... ./memory/... ./keyword/ ./chunk/ ./agent/
	cd bench && $(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) ./...

.PHONY: bench-faiss
bench-faiss: faiss-deps
	$(GO) test $(FAISS_TAG) -run '^$$' -bench . -benchtime $(BENCHTIME) ./vdb/faiss/

.PHONY: bench-faiss-1m
bench-faiss-1m: faiss-deps # ~6 GB of RAM and a few minutes: IVF over 1M clustered vectors
	AGENTMEM_BENCH_1M=1 $(GO) test $(FAISS_TAG) -run '^$$' -bench 'Approx/n=1000000' -benchtime 2s -timeout 60m ./vdb/faiss/

.PHONY: docker
docker:
	docker build --build-arg VERSION=$(VERSION) -t agentmem .

.PHONY: docker-test
docker-test:
	docker build --target test .

# test-container: see scripts/test-container.sh for the engine choice and
# its environment variables.
.PHONY: test-container
test-container:
	sh scripts/test-container.sh

# fuzz finds the targets itself, so that new ones are run too (bench/ is a
# separate module and has none).
.PHONY: fuzz
fuzz:
	@set -e; for f in $$(grep -rl --include='*_test.go' '^func Fuzz' . | grep -v '^./bench/' | sort); do \
		dir=$$(dirname $$f); \
		for name in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
			echo "== $$dir $$name ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 0 $$dir; \
		done; \
	done

.PHONY: clean
clean:
	rm -rf bin
