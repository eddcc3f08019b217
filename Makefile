# pyjion: `make demo` and `make test` do the whole set-up on a fresh Debian machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.pyjion-deps
SOURCES := $(wildcard pyjion/*.pyx pyjion/*.h pyjion/*.cpp pyjion/codegen/*.cpp pyjion/codegen/*.h pyjion/codegen/*.def pyjion/codegen/*.c) setup.py pyproject.toml

.PHONY: setup build demo test bench bench-check fuzz clean

setup: build

$(STAMP): requirements-dev.txt
	tools/setup_system.sh
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

build/asmjit/lib/libasmjit.a:
	tools/build_asmjit.sh

$(VENV)/.pyjion-built: $(STAMP) build/asmjit/lib/libasmjit.a $(SOURCES)
	$(PY) -m pip install -q --no-build-isolation -e .
	$(PY) tools/install_pth.py
	touch $@

build: $(VENV)/.pyjion-built

demo: setup
	$(PY) demo/demo.py

test: setup
	$(PY) -m pytest tests -q

bench: setup
	$(PY) -m pytest bench -q

bench-check: setup
	$(PY) tools/bench_check.py

clean:
	rm -rf build/lib* build/temp* pyjion/*.so pyjion/_eval.c *.egg-info $(VENV)/.pyjion-built
