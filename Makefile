# opscope: the two commands a user needs.
#   make demo   set up (apt packages), build, and run the RMSNorm case study
#   make test   set up, build, and run every test: unit + end-to-end, the same under ASan+UBSan,
#               the fuzzers for a bounded time (FUZZ_SECONDS in all), and the Explorer's browser tests
# Other targets: build, bench, asan, fuzz, browser-test, format, format-check, clean.

SHELL := /bin/bash
JOBS ?= 2
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
CMAKE_FLAGS ?=

APT_PACKAGES := build-essential cmake ninja-build ccache pkg-config clang libclang-rt-14-dev \
  libgtest-dev libgmock-dev libbenchmark-dev libfmt-dev libsimdjson-dev libcpp-httplib-dev \
  libcli11-dev zlib1g-dev libzstd-dev libisal-dev libre2-dev libboost-dev libprotozero-dev \
  protobuf-compiler python3 clang-format git \
  openmpi-bin libopenmpi-dev pybind11-dev python3-dev python3-pytest python3-pandas python3-numpy \
  python3-pip python3-setuptools python3-wheel python3-venv python3-torch \
  libthrift-dev thrift-compiler libsnappy-dev liblz4-dev libbrotli-dev libsqlite3-dev sqlite3 \
  python3-matplotlib python3-nbclient python3-ipykernel python3-nbformat

.PHONY: demo test deps build asan fuzz bench unit-test asan-test fuzz-test browser-test format \
  format-check clean

deps:
	@tools/install_deps.sh $(APT_PACKAGES)

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPSCOPE_WERROR=ON $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	./$(BUILD)/opscope demo rmsnorm --out profiles

# Without MPI: OpenMPI's own allocations at MPI_Finalize read as leaks to LeakSanitizer. This build
# then checks the no-MPI path (`opscope report` under a launcher says it lacks MPI); `build/` runs
# mpirun.
$(ASAN_BUILD)/build.ninja:
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DOPSCOPE_SANITIZE=ON -DOPSCOPE_WERROR=ON \
	  -DOPSCOPE_BUILD_BENCH=OFF -DOPSCOPE_MPI=OFF $(CMAKE_FLAGS)

asan: deps $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS)

$(FUZZ_BUILD)/build.ninja:
	CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DOPSCOPE_FUZZ=ON $(CMAKE_FLAGS)

fuzz: deps $(FUZZ_BUILD)/build.ninja
	cmake --build $(FUZZ_BUILD) --target import_fuzz op_args_fuzz parquet_fuzz perfetto_fuzz xplane_fuzz nsys_fuzz torch_merge_fuzz neuron_json_fuzz -j $(JOBS)

unit-test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

asan-test: asan
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS)

fuzz-test: fuzz
	tools/run_fuzzers.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

browser-test: build
	tools/run_browser_tests.sh $(BUILD)
	tools/run_report_browser_tests.sh $(BUILD)

test: format-check unit-test asan-test fuzz-test browser-test
	@echo "make test: all suites passed"

bench: build
	tools/run_benchmarks.sh $(BUILD)

format:
	git ls-files '*.h' '*.cc' '*.inc' | xargs clang-format -i

# Fails on any C++ file that differs from .clang-format's output (run `make format` to fix).
format-check: deps
	git ls-files '*.h' '*.cc' '*.inc' | xargs clang-format --dry-run --Werror

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
