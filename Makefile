# Two everyday commands: `make lab` (the course in JupyterLab) and `make test` (everything CI runs).
# Each creates .venv when missing and installs the pinned requirements first.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.course-installed
PIP    := $(PY) -m pip install --quiet --disable-pip-version-check

# requirements.txt is the one source of versions, uv's own included.
UV_PIN := $(shell grep -m1 '^uv==' requirements.txt 2>/dev/null)

.PHONY: lab test notebooks bench install clean

# uv installs the pinned requirements in seconds (pip: about a minute on a fresh machine).
# uv comes from PATH, or is fetched once into .venv/.uv by the system's pip (or the venv's own);
# when there is no way to get it, pip does the job. The venv gets pip too, for %pip in notebooks.
# UV_NATIVE_TLS: uv trusts the system's certificates, as pip does (a company proxy's CA included).
# One uv call installs the pins and builds the editable course package in parallel (a second call
# waited for its own build environment: about 5 s of a cold first start); pip fetches uv as a
# wheel only, without compiling it.
# --compile-bytecode: the venv's packages get their .pyc once, at install. uv does not compile by
# default, and with PYTHONDONTWRITEBYTECODE set (common in containers) nothing ever would: every
# kernel and every `python -m course_lib` would compile openai, IPython and the rest from source.
UV_BOOT := $(VENV)/.uv

$(STAMP): requirements.txt pyproject.toml
	@set -e; \
	test -x $(PY) || $(PYTHON) -m venv --without-pip $(VENV); \
	uv="$$(command -v uv || true)"; \
	if [ -z "$$uv" ] && [ ! -x $(UV_BOOT)/bin/uv ] && [ -n "$(UV_PIN)" ]; then \
	  if $(PYTHON) -m pip --version >/dev/null 2>&1; then pip_cmd="$(PYTHON) -m pip"; \
	  else $(PY) -m pip --version >/dev/null 2>&1 || $(PY) -m ensurepip --upgrade >/dev/null; pip_cmd="$(PY) -m pip"; fi; \
	  $$pip_cmd install --quiet --disable-pip-version-check --no-compile --no-deps --only-binary=:all: \
	    --target $(UV_BOOT) "$(UV_PIN)" >/dev/null 2>&1 || true; \
	fi; \
	if [ -z "$$uv" ] && [ -x $(UV_BOOT)/bin/uv ]; then uv=$(UV_BOOT)/bin/uv; fi; \
	if [ -n "$$uv" ] && UV_NATIVE_TLS=1 "$$uv" pip install --quiet --compile-bytecode --python $(PY) -r requirements.txt pip -e .; then \
	  echo "Зависимости установлены через uv ($$uv)."; \
	else \
	  echo "uv недоступен: устанавливаю через pip (это дольше)."; \
	  $(PY) -m pip --version >/dev/null 2>&1 || $(PY) -m ensurepip --upgrade >/dev/null; \
	  $(PIP) -r requirements.txt && $(PIP) --no-deps -e .; \
	fi
	@$(PY) -m compileall -q -j 0 course_lib $(wildcard grader) >/dev/null  # the course's own .pyc, as above
	$(PY) -m course_lib doctor
	@touch $(STAMP)

install: $(STAMP)

# Jupyter refuses to run as root unless told; containers and CI machines often are root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

# Lab's root is the course folder, so notebooks/ and exercises/ are both in the file browser.
# jupyter/config (news and update pop-ups off) is added to the config path; the student's own
# ~/.jupyter is read as usual and never written. The first layout (00_setup open, the file browser
# at the course folder) is copied once into LAB_STATE; after that Lab keeps the student's layout.
# LAB_ARGS passes more options (the browser test: --no-browser, port, token).
LAB_STATE ?= $(VENV)/course-lab
WORKSPACE := $(LAB_STATE)/workspaces/default-37a8.jupyterlab-workspace
LAB_ARGS  ?=

# PATH and VIRTUAL_ENV: Lab's terminals (and kernels) find the course's python first, so every
# `python -m course_lib …` the course prints works when pasted into a terminal opened from Lab.
VENV_ABS := $(abspath $(VENV))

lab: $(STAMP)
	@mkdir -p "$(LAB_STATE)/workspaces"
	@test -f "$(WORKSPACE)" || cp jupyter/workspace.json "$(WORKSPACE)"
	JUPYTER_CONFIG_PATH="$(CURDIR)/jupyter/config$(if $(JUPYTER_CONFIG_PATH),:$(JUPYTER_CONFIG_PATH))" \
	  PATH="$(VENV_ABS)/bin:$$PATH" VIRTUAL_ENV="$(VENV_ABS)" \
	  exec $(VENV)/bin/jupyter lab --ServerApp.root_dir="$(CURDIR)" \
	  --LabApp.workspaces_dir="$(LAB_STATE)/workspaces" $(ROOT_FLAG) $(LAB_ARGS)

# Unit tests, exercise and grader checks, and nbval over every notebook, in one pytest run.
# A student bundle from `grader release` has no tests/: there it checks that every notebook runs
# (nbval-lax), since a solved exercise legitimately changes the stored check() output.
TEST_PATHS := $(wildcard tests) notebooks
NBVAL_MODE := $(if $(wildcard tests),--nbval,--nbval-lax)

# pytest-xdist spreads the suite over TEST_WORKERS processes (default: one per core, plus one, since
# many tests wait on kernels, subprocesses and servers). --dist loadfile keeps a file on one worker,
# so a notebook's cells run in order in one kernel and a module's fixture is built once;
# tests/conftest.py starts the longest files first (hence --no-loadscope-reorder).
TEST_WORKERS ?= $(shell $(PYTHON) -c 'import os; print(len(os.sched_getaffinity(0)) + 1)' 2>/dev/null || echo 2)
TEST_DIST    := --dist loadfile $(if $(wildcard tests),--no-loadscope-reorder)

# PYTHONDONTWRITEBYTECODE is cleared for the run: the suite starts some hundred Python processes
# (kernels, consoles, graders); each would compile the course's modules, and pytest each worker's
# rewritten tests, from source again. The caches land in __pycache__/, ignored by git and release.
test: $(STAMP)
	PYTHONDONTWRITEBYTECODE= LLM_BACKEND=offline COURSE_DOTENV=0 OFFLINE_STREAM_CHARS_PER_SECOND=0 $(PY) -m pytest $(TEST_PATHS) $(NBVAL_MODE) --nbval-sanitize-with notebooks/sanitize.cfg -n $(TEST_WORKERS) $(TEST_DIST)

# Re-execute every notebook in a fresh kernel and store its outputs (what nbval compares against).
notebooks: $(STAMP)
	$(PY) -m course_lib notebooks

bench: $(STAMP)
	$(PY) benchmarks/bench_prepare.py
	$(PY) benchmarks/bench_grader.py

clean:
	rm -rf $(VENV) .pytest_cache
