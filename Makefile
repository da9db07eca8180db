# gosr: a Static Runtime for PyTorch models, in Go.
GO ?= go
PYTHON ?= /usr/bin/python3

.PHONY: run test testdata schemas zoo kernel-models bench-kernels bench bench-pytorch fuzz vet build libtorch proto

build:
	$(GO) build ./...

# Run srbench on a model built into the binary (no files, nothing installed beyond Go).
run:
	$(GO) run ./cmd/srbench run -model mlp

test: vet
	$(GO) test ./...

vet:
	$(GO) vet ./...

# Remake the PyTorch reference fixtures (needs Debian's python3-torch).
testdata: schemas
	$(PYTHON) scripts/make_ir_samples.py
	$(PYTHON) scripts/make_testdata.py
	$(PYTHON) scripts/make_dense_testdata.py
	$(PYTHON) scripts/make_pt_testdata.py testdata/pt
	$(PYTHON) scripts/make_tscode_samples.py
	$(PYTHON) scripts/make_pickle_testdata.py
	$(PYTHON) scripts/make_pyfallback_testdata.py
	$(PYTHON) scripts/make_package_testdata.py
	$(PYTHON) scripts/make_serve_testdata.py

# Remake gosr's one list of PyTorch's (and torchvision's) operator schemas,
# which the TorchScript compiler, the alias analysis and graph's tests read.
schemas:
	$(PYTHON) graph/schemas/gen.py

# The compatibility suite's archives (torchvision's and torch.nn's models,
# four variants each; minutes), into the cache internal/compat's test reads.
zoo:
	$(PYTHON) scripts/make_zoo.py --cache

# The kernel figures' ten classifiers at 224x224 (docs/benchmarks.md,
# "Kernels at 224x224"), then gosr beside PyTorch and ONNX Runtime on them.
kernel-models:
	$(PYTHON) scripts/make_kernel_models.py

bench-kernels: kernel-models
	$(GO) run ./cmd/srbench compare $${GOSR_PT_CACHE:-$${XDG_CACHE_HOME:-$$HOME/.cache}/gosr}/kernels224 -warmup 2 -repeats 3 -pt-timeout 10m

# Go benchmarks, then gosr beside PyTorch's Static Runtime on the same models in one run.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime=1s ./staticruntime/ ./ops/
	$(GO) run ./cmd/srbench compare -model all

# Every fuzzer in the repository, as package:Name
# (internal/hostile's TestMakeFuzzListsEveryFuzzer keeps the list whole).
FUZZERS := \
	./graph:FuzzParse \
	./graph:FuzzParseSchema \
	./loaders:FuzzLoadBytes \
	./loaders:FuzzParseSafetensors \
	./loaders:FuzzReadTorchSave \
	./loaders/pickle:FuzzUnpickle \
	./loaders/tscode:FuzzCompile \
	./loaders/tscode:FuzzParse \
	./serve:FuzzDecodeGRPC \
	./serve:FuzzDecodeHTTP \
	./serve:FuzzParseJSONFloat \
	./staticruntime:FuzzPrepareAndRun \
	./staticruntime:FuzzRunInputs
FUZZTIME ?= 60s

# Each fuzzer for FUZZTIME (make fuzz FUZZTIME=10s for a short round).
# Go's fuzzing engine can stop with "context deadline exceeded" when
# FUZZTIME ends while a worker is still on a slow input, with no failing
# input found: such a round is run again, up to three tries (CI saw it
# once in twenty fuzzers a round). A real failure writes its
# input under testdata/fuzz ("Failing input written") and fails at once.
fuzz:
	@set -e; log=$$(mktemp); trap 'rm -f $$log' EXIT; for f in $(FUZZERS); do \
		pkg=$${f%%:*}; name=$${f##*:}; \
		for try in 1 2 3; do \
			echo "== $$pkg $$name ($(FUZZTIME))"; \
			if $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s $$pkg >$$log 2>&1; then cat $$log; break; fi; \
			cat $$log; \
			if [ $$try = 3 ] || grep -q "Failing input written" $$log || ! grep -q "context deadline exceeded" $$log; then exit 1; fi; \
			echo "== $$name: the engine's deadline, no failing input: once more"; \
		done; \
	done

# The libtorch kernel shim (needs Debian's libtorch-dev): C++ with an
# extern "C" API, loaded at run time by package libtorch through purego.
TORCH_INC ?= /usr/include
TORCH_LIB ?= /usr/lib/x86_64-linux-gnu
CXX ?= g++
SHIM := build/libgosrtorch.so

libtorch: $(SHIM)

$(SHIM): libtorch/shim/gosr_torch.cpp libtorch/shim/gosr_torch.h
	@mkdir -p build
	$(CXX) -std=c++17 -O2 -fPIC -shared -Wall -Wno-unused-parameter \
		-I$(TORCH_INC) -I$(TORCH_INC)/torch/csrc/api/include \
		-o $@ libtorch/shim/gosr_torch.cpp \
		-L$(TORCH_LIB) -Wl,-rpath,$(TORCH_LIB) -Wl,--no-as-needed -ltorch -ltorch_cpu -lc10

# The protocol's gRPC service and Triton's model configuration, as Go.
# Needs protoc (Debian's protobuf-compiler) and the two Go plugins, at
# the versions the generated files name.
proto:
	GOFLAGS= go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
	GOFLAGS= go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
	PATH="$$(go env GOPATH)/bin:$$PATH" protoc --go_out=. --go_opt=module=github.com/gosr/gosr \
		--go-grpc_out=. --go-grpc_opt=module=github.com/gosr/gosr serve/inferpb/inference.proto
	PATH="$$(go env GOPATH)/bin:$$PATH" protoc --go_out=. --go_opt=module=github.com/gosr/gosr serve/configpb/model_config.proto
