# pyjion: `make demo` and `make test` do the whole set-up on a fresh Debian machine.
# PYVER picks the CPython to build for and test with: 3.11 (the default,
# .venv, the `python3` on PATH) or 3.13 (.venv-3.13, an interpreter found or
# built by tools/find_python.sh). Each version has its own venv, extension
# files (pyjion/*.cpython-3NN-*.so) and build folders.
PYVER ?= 3.11
ifeq ($(PYVER),3.11)
PYTHON ?= python3
VENV := .venv
else
PYTHON = $$(tools/find_python.sh $(PYVER))
VENV := .venv-$(PYVER)
endif
CPTAG := cp$(subst .,,$(PYVER))
PY := $(VENV)/bin/python
STAMP := $(VENV)/.pyjion-deps
SOURCES := $(wildcard pyjion/*.pyx pyjion/*.h pyjion/*.cpp pyjion/codegen/*.cpp pyjion/codegen/*.h pyjion/codegen/*/*.cpp pyjion/codegen/*/*.h pyjion/codegen/*/*.def pyjion/codegen/*/*.c pyjion/*.py) _pyjion_startup.py setup.py pyproject.toml

.PHONY: setup build wheel demo test unit-test smoke bench bench-check bench-whole bench-profile-accuracy bench-macro thirdparty fuzz regrtest refleak clean

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
	# pyjion's own bytecode, written even where PYTHONDONTWRITEBYTECODE is set:
	# a process that compiles its first source pays ~1 ms to start the compiler.
	$(PY) -m compileall -q pyjion _pyjion_startup.py
	touch $@

build: $(VENV)/.pyjion-built

# A wheel per supported CPython into dist/ (PYVER=3.11 or 3.13): the extensions as
# built for the venv's interpreter, linking no libpython, repaired by
# auditwheel (a manylinux tag: nothing loaded from this machine but the C
# library), the start-up .pth inside.
WHEEL_BUILD := build/wheel-$(PYVER)
WHEEL_STAMP := dist/.pyjion-wheel-$(PYVER)
$(WHEEL_STAMP): $(VENV)/.pyjion-built $(SOURCES)
	# (setuptools packs whatever an earlier build left in build/lib.*)
	rm -rf $(WHEEL_BUILD) build/lib.*-$(subst .,,$(PYVER)) build/bdist.* && mkdir -p $(WHEEL_BUILD) dist
	$(PY) -m pip wheel -q --no-build-isolation --no-deps -w $(WHEEL_BUILD) .
	rm -f dist/pyjion-*-$(CPTAG)-*.whl
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m auditwheel repair --strip -w dist $(WHEEL_BUILD)/pyjion-*.whl
	touch $@

wheel: $(WHEEL_STAMP)
	ls dist/pyjion-*-$(CPTAG)-*.whl

demo: setup
	$(PY) demo/demo.py

# Unit and differential tests (the wheel's install among them), then the
# regression-suite smoke selection with the JIT forced on every function
# (each module must pass).
test: setup wheel
	$(PY) -m pytest tests -q
	$(PY) tools/regrtest.py --smoke --jit-only -j 2 --timeout 600

unit-test: setup
	$(PY) -m pytest tests -q

smoke: setup
	$(PY) tools/regrtest.py --smoke --jit-only -j 2 --timeout 600

# The whole CPython suite, stock vs JIT, per module (about an hour here).
regrtest: setup
	$(PY) tools/regrtest.py --all -j 2 --timeout 900 --markdown docs/regrtest-$(PYVER).md

# Reference leaks, as regrtest's -R 3:3 on a debug build would find them but on
# this release build (tools/refleak.py): every test of the suite run 3+3 times
# with leak deltas measured (tests that start subprocesses run once), then the
# smoke selection's modules in-process with the JIT forced. `make test` runs a
# short version (tests/test_refleak.py). REFLEAK_MODULES=... narrows the second part.
REFLEAK_MODULES ?= smoke
refleak: setup
	$(PY) tools/refleak.py -R 3:3 tests -q -p no:cacheprovider
	$(PY) tools/refleak.py -R 3:3 --regrtest $(REFLEAK_MODULES)

# Differential fuzzing, JIT vs stock: single functions of arithmetic and
# control flow (fuzz_subset.py), then whole programs with calls, classes,
# generators, exceptions and closures (fuzz_programs_run.py).
fuzz: setup
	$(PY) tests/fuzz_subset.py --n $${FUZZ_N:-5000} --seed $${FUZZ_SEED:-1}
	$(PY) tests/fuzz_programs_run.py --n $${FUZZ_PROGRAMS_N:-1000} --seed $${FUZZ_SEED:-1}
	$(PY) tests/fuzz_numeric.py --n $${FUZZ_NUMERIC_N:-3000} --seed $${FUZZ_SEED:-1}

bench: setup
	env -u PYJION $(PY) -m pytest bench -q -p no:cacheprovider -p no:pyjion --benchmark-columns=median,min,max,rounds --benchmark-sort=name --benchmark-group-by=group

bench-check: setup
	env -u PYJION $(PY) tools/bench_check.py --run --geomean-only

# The profiler's own-time shares against py-spy's samples of the same runs
# (call-heavy bench programs): bench/PROFILE_ACCURACY.md.
bench-profile-accuracy: setup
	env -u PYJION $(PY) bench/profile_accuracy.py

# Whole-process runs of the bench programs (start-up + one run() + exit),
# stock vs PYJION=1: bench/WHOLE_PROGRAM.md and .json (bench/whole_process.py).
bench-whole: setup
	env -u PYJION $(PY) bench/whole_process.py $(BENCH_WHOLE_ARGS)

# Library-heavy programs (bench/macro: sympy, networkx, sqlglot, template
# engines, parsers, the stdlib's encoders...), packages pinned and installed
# into build/macro/site (3.11; site-3.13 for PYVER=3.13): whole process, steady
# state and callgrind's estimated cycles, stock vs PYJION=1, both sides on
# $(PY): bench/MACRO.md and .json, bench/MACRO-3.13.* for PYVER=3.13
# (bench/macro_suite.py; BENCH_MACRO_ARGS="whole --pairs 9" for one mode,
# "cycles --no-compile --kinds whole" adds the cost of pyjion enabled but
# compiling nothing).
bench-macro: setup
	command -v valgrind >/dev/null || (apt-get update -qq && apt-get install -y -qq valgrind >/dev/null)
	env -u PYJION $(PY) bench/macro_suite.py $${BENCH_MACRO_ARGS:-all}

# Third-party test suites (mpmath, networkx; pip-installed into build/thirdparty),
# stock vs PYJION=1: outcomes test by test, CPU time and peak RSS
# (tools/thirdparty_suites.py; THIRDPARTY_ARGS="--jit-env PYJION_THRESHOLD=1000" etc.).
thirdparty: setup
	env -u PYJION $(PY) tools/thirdparty_suites.py --rounds $${THIRDPARTY_ROUNDS:-3} $(THIRDPARTY_ARGS)

clean:
	rm -rf build/lib* build/temp* pyjion/*.so pyjion/_eval.c *.egg-info $(VENV)/.pyjion-built
