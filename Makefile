# protokube — every task a developer or CI needs, from a fresh machine.
#   make run    install (first time) and serve the API on https://127.0.0.1:6443 with embedded storage
#   make test   install (first time) and run every check: generated code, lint, tests, quick benchmark
#   make test-shuffled  the suites that share a server again, in another random order
#   make fuzz   the property tests of tests/property with many examples (FUZZ_EXAMPLES, 5000 by default)
#   make soak   about 30 minutes: a 10-minute mixed load with 200 watchers (bench/soak.py), then 50 kill -9 cycles

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# What is installed, for this pyproject.toml: the server's runtime dependencies (make run), and the
# dev extras on top of them (make test: pytest, the clients the tests drive, the bench's tools).
PYPROJECT := $(shell cat pyproject.toml | cksum | cut -d' ' -f1)
RUNTIME := $(VENV)/.runtime-$(PYPROJECT)
STAMP  := $(VENV)/.dev-$(PYPROJECT)
PROTOS := $(shell find proto -name '*.proto' | sort)
# .proto files that declare gRPC services get gRPC stubs too.
SERVICE_PROTOS := $(shell grep -l '^service ' $(PROTOS))
# Debian packages the tests and benchmarks run against: real etcdctl, real etcd, wrk; Chromium for the
# wire explorer page; protoc and the protobuf runtimes, Go and Ruby for the clients in examples/clients.
DEBS   := etcd-client etcd-server wrk chromium protobuf-compiler libprotobuf-dev libprotobuf-java \
          golang-go golang-google-protobuf-dev ruby ruby-google-protobuf
HOST   ?= 127.0.0.1
PORT   ?= 6443

.PHONY: venv gen gen-check lint test pytest test-shuffled test-clients fuzz soak run bench bench-quick stubs debs clean

venv: $(STAMP)

$(RUNTIME): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -e .
	# gen/ is a source root of its own (generated modules import each other as k8s.io..., etcdserverpb...).
	echo "$(CURDIR)/gen" > "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/protokube-gen.pth"
	rm -f $(VENV)/.runtime-* $(VENV)/.installed-*
	touch $@

$(STAMP): $(RUNTIME)
	$(BIN)/pip install -q -e '.[dev]'
	rm -f $(VENV)/.dev-*
	touch $@

debs:
	@missing=""; for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get install -y -qq $$missing >/dev/null 2>&1 || \
	  { $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq $$missing; }; \
	fi

## Generated code: gen/ is committed and must always equal what `make gen` writes.
# DESCRIPTORS: every file's descriptor with its comments (source info), for the OpenAPI descriptions.
DESCRIPTORS := protokube_descriptors.binpb
gen: $(STAMP)
	rm -rf gen && mkdir -p gen
	$(BIN)/python -m grpc_tools.protoc -Iproto --python_out=gen --pyi_out=gen $(PROTOS)
	$(BIN)/python -m grpc_tools.protoc -Iproto --include_source_info --descriptor_set_out=gen/$(DESCRIPTORS) $(PROTOS)
	$(if $(SERVICE_PROTOS),$(BIN)/python -m grpc_tools.protoc -Iproto --grpc_python_out=gen $(SERVICE_PROTOS))

gen-check: $(STAMP)
	rm -rf .gen-check && mkdir -p .gen-check
	$(BIN)/python -m grpc_tools.protoc -Iproto --python_out=.gen-check --pyi_out=.gen-check $(PROTOS)
	$(BIN)/python -m grpc_tools.protoc -Iproto --include_source_info --descriptor_set_out=.gen-check/$(DESCRIPTORS) $(PROTOS)
	$(if $(SERVICE_PROTOS),$(BIN)/python -m grpc_tools.protoc -Iproto --grpc_python_out=.gen-check $(SERVICE_PROTOS))
	@diff -r gen .gen-check >/dev/null || { diff -r gen .gen-check | head -20; rm -rf .gen-check; \
	  echo "gen/ is stale: run 'make gen' and commit it"; exit 1; }
	rm -rf .gen-check
	@echo "gen/ is up to date"

## Typed stubs for other languages: make stubs LANG=java. Each language gets the compiler its runtime
## needs (tools/stubs.py says which); examples/clients/ has a client in each that the tests run.
STUB_LANGS := java cpp ruby go typescript csharp php kotlin objc
stubs: $(STAMP) debs
	@case " $(STUB_LANGS) " in *" $(LANG) "*) ;; *) echo "LANG must be one of: $(STUB_LANGS)"; exit 2;; esac
	$(BIN)/python -m tools.stubs $(LANG) stubs/$(LANG)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/buf lint

# The suite runs on PYTEST_WORKERS processes (one module per worker at a time: a module's server is
# started once), modules and tests in a random order whose seed pytest-randomly prints first
# ("Using --randomly-seed=N"; PYTEST_SEED=N repeats it); the quick benchmark runs after it, alone,
# since it measures ratios on an idle machine. test-shuffled runs the suites that share a server per
# worker (tests/gateway) once more in another order, so other modules meet on a worker's server.
PYTEST_WORKERS ?= 2
PYTEST_SEED ?= default
RANDOM_ORDER = --randomly-dont-reset-seed
# client-go and helm, built from the Go module proxy on their first run (minutes on a fresh machine):
# test-clients runs them, not test, which stays within about 15 minutes; .ci/run runs both.
CLIENT_SUITES = tests/gateway/test_client_go.py tests/gateway/test_helm.py
pytest: $(STAMP) debs
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile $(RANDOM_ORDER) --randomly-seed=$(PYTEST_SEED) \
	  --ignore=tests/bench $(addprefix --ignore=,$(CLIENT_SUITES)) $(PYTEST_ARGS)
	$(BIN)/python -m pytest -p no:randomly tests/bench $(PYTEST_ARGS)

test-shuffled: $(STAMP) debs
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile $(RANDOM_ORDER) --randomly-seed=$(PYTEST_SEED) \
	  tests/gateway $(addprefix --ignore=,$(CLIENT_SUITES)) $(PYTEST_ARGS)

test-clients: $(STAMP) debs
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile -p no:randomly $(CLIENT_SUITES) $(PYTEST_ARGS)

test: $(STAMP) debs gen-check lint pytest

## Property tests with hypothesis's "fuzz" profile (tests/property/conftest.py); no per-test time limit;
## schemathesis with SCHEMATHESIS_EXAMPLES cases per operation, media type and mode. Then, where atheris installs (a binary wheel), coverage-guided fuzzing of the decoders for
## ATHERIS_SECONDS (corpus and crashing inputs in .fuzz/).
FUZZ_EXAMPLES ?= 5000
SCHEMATHESIS_EXAMPLES ?= 50
ATHERIS_SECONDS ?= 300
fuzz: $(STAMP) debs
	HYPOTHESIS_PROFILE=fuzz FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/python -m pytest -q --timeout=0 tests/property $(PYTEST_ARGS)
	SCHEMATHESIS_GROUPS=all SCHEMATHESIS_EXAMPLES=$(SCHEMATHESIS_EXAMPLES) $(BIN)/python -m pytest -q --timeout=0 -n $(PYTEST_WORKERS) \
	  tests/gateway/test_schemathesis.py $(PYTEST_ARGS)
	@if $(BIN)/pip install -q --only-binary=:all: atheris==3.0.0 >/dev/null 2>&1; then \
	  mkdir -p .fuzz/corpus && $(BIN)/python -m tests.property.atheris_fuzz -max_total_time=$(ATHERIS_SECONDS) \
	    -max_len=4096 -artifact_prefix=.fuzz/ .fuzz/corpus; \
	else echo "atheris does not install here: hypothesis only"; fi

## Soak: memory slope and leaks under a steady load (SOAK_ARGS, e.g. --minutes 30), then crash safety at length.
CRASH_CYCLES ?= 50
soak: $(STAMP) debs
	$(BIN)/python -m bench.soak $(SOAK_ARGS)
	CRASH_CYCLES=$(CRASH_CYCLES) $(BIN)/python -m pytest -q --timeout=0 tests/faults/test_crash_safety.py

run: $(RUNTIME)
	$(BIN)/protokube serve --listen $(HOST):$(PORT)

bench: $(STAMP) debs
	$(BIN)/python -m bench

bench-quick: $(STAMP) debs
	$(BIN)/python -m bench --quick

clean:
	rm -rf $(VENV) .gen-check stubs bench/results .hypothesis .fuzz .cache examples/clients/typescript/node_modules
