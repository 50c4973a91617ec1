# Two everyday commands: `make lab` (the course in JupyterLab) and `make test` (everything CI runs).
# Each creates .venv when missing and installs the pinned requirements first.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.course-installed

.PHONY: lab test notebooks bench install clean

$(STAMP): requirements.txt pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -e .
	$(PY) -m course_lib doctor
	@touch $(STAMP)

install: $(STAMP)

# Jupyter refuses to run as root unless told; containers and CI machines often are root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

lab: $(STAMP)
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks $(ROOT_FLAG)

# Unit tests, exercise and grader checks, and nbval over every notebook, in one pytest run.
# A student bundle from `course_lib release` has no tests/: there it checks that every notebook runs
# (nbval-lax), since a solved exercise legitimately changes the stored check() output.
TEST_PATHS := $(wildcard tests) notebooks
NBVAL_MODE := $(if $(wildcard tests),--nbval,--nbval-lax)

test: $(STAMP)
	LLM_BACKEND=offline COURSE_DOTENV=0 $(PY) -m pytest $(TEST_PATHS) $(NBVAL_MODE) --nbval-sanitize-with notebooks/sanitize.cfg

# Re-execute every notebook in a fresh kernel and store its outputs (what nbval compares against).
notebooks: $(STAMP)
	$(PY) -m course_lib notebooks

bench: $(STAMP)
	$(PY) benchmarks/bench_prepare.py
	$(PY) benchmarks/bench_grader.py

clean:
	rm -rf $(VENV) .pytest_cache
