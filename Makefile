# Inside One Generation — the two commands a reader needs are `make lab` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

# Keep Jupyter, IPython and matplotlib state inside the build, never in ~.
export JUPYTER_CONFIG_DIR  := $(CURDIR)/build/jupyter/config
export JUPYTER_RUNTIME_DIR := $(CURDIR)/build/jupyter/runtime
export IPYTHONDIR          := $(CURDIR)/build/ipython
export MPLCONFIGDIR        := $(CURDIR)/build/matplotlib
export MPLBACKEND          := module://matplotlib_inline.backend_inline
export PYTHONHASHSEED      := 0
export PYDEVD_DISABLE_FILE_VALIDATION := 1
export JUPYTER_PLATFORM_DIRS := 1
# An environment that says PYTHONDONTWRITEBYTECODE would make every test process, kernel and
# `labkit` subprocess compile labkit again: there, byte code is cached under build/ instead.
ifdef PYTHONDONTWRITEBYTECODE
unexport PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX := $(CURDIR)/build/pycache
endif

PYTEST_ARGS ?= -n 2 --dist loadscope
$(shell mkdir -p build/jupyter/config build/jupyter/runtime build/ipython build/matplotlib && chmod 700 build/jupyter/runtime)

.PHONY: lab test test-fast test-portable browser-test bench setup notebooks zh fixtures book pdf book-check lint class-copy grade clean

$(STAMP): pyproject.toml jupyter/overrides.json
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	mkdir -p $(VENV)/share/jupyter/lab/settings
	cp jupyter/overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	touch $(STAMP)

setup: $(STAMP)

## Open the book in JupyterLab at its first page: `labkit lab` (booklab/launcher.py) holds the flags.
## The pages are never written; a reader's edits go to my-edits/ (`labkit reset PAGE|--all`).
lab: $(STAMP)
	$(VENV)/bin/labkit lab $(LAB_ARGS)

## Everything the book promises: unit tests, fixtures, pairing, the offline book check, nbval
## over both editions (a zh page's kernel runs in its folder, where zh/.labkit-edition makes the
## kit speak Chinese: its stored verdicts are Chinese, every other output the English page's).
test: $(STAMP)
	$(PY) -m pytest $(PYTEST_ARGS) --nbval --nbval-current-env \
	    --nbval-sanitize-with tests/nbval_sanitize.cfg tests $(wildcard answer_key) notebooks $(wildcard zh/notebooks)

## The edit-test loop: the unit tests without the `slow` marker (no notebook, no subprocess-heavy
## test, no wheel build, no class copy, no torture run); `make test` runs those too.
test-fast: $(STAMP)
	$(PY) -m pytest $(PYTEST_ARGS) -q -m "not slow" tests $(wildcard answer_key)

## What floats can change, under other OpenBLAS kernels, single-threaded: a stored output or a
## test that depends on the last bits of one machine's BLAS fails here (see CONTRIBUTING.md,
## numbers). It runs every notebook and the test files that compute numbers (kernels, traces,
## labs, checkers, players' data, fixtures against their recipes); the checks of the book's
## structure, the CLI plumbing, the class copy, the crash harness and the wheel compute no float
## and run once, in `make test`.  English pages only: a zh page runs the same code cells and stores
## the same outputs (tests/test_zh_pages.py checks it byte for byte), so a float that moves under
## another kernel moves in the English page first; running zh/notebooks too would double the time
## and test no other number.
PORTABLE_KERNELS ?= Prescott Sandybridge
PORTABLE_TESTS := $(wildcard tests/test_nn*.py tests/test_diffusion_*.py tests/test_text_*.py \
    tests/test_labs_*.py tests/test_check*.py tests/test_tools_answer.py tests/test_tools_grammar.py \
    tests/test_tools_model.py tests/test_tools_summary_faithful.py tests/test_chapter7_figures.py \
    tests/test_contracts_716.py tests/test_divergence.py tests/test_events.py tests/test_players.py \
    tests/test_portability_mutations.py tests/test_serving.py) \
    tests/test_book.py::test_fixtures_match_their_recipes \
    tests/test_book.py::test_deterministic_npz_and_clear_error_on_corruption
PORTABLE_SKIP := --deselect tests/test_divergence.py::test_cli_exit_codes \
    --deselect tests/test_players.py::test_a_bundle_is_valid_javascript
test-portable: $(STAMP)
	@set -e; for kernel in $(PORTABLE_KERNELS); do \
	  echo "== OPENBLAS_CORETYPE=$$kernel OPENBLAS_NUM_THREADS=1"; \
	  OPENBLAS_CORETYPE=$$kernel OPENBLAS_NUM_THREADS=1 $(PY) -m pytest $(PYTEST_ARGS) -q --nbval --nbval-current-env \
	      --nbval-sanitize-with tests/nbval_sanitize.cfg $(PORTABLE_SKIP) $(PORTABLE_TESTS) notebooks; \
	done

## Every toc page opened in real JupyterLab in Chromium, Run All, every widget moved; the
## players in their static harness; the reader's first hour; `labkit lab` from a pip-only
## environment (~8 min).
browser-test: $(STAMP)
	scripts/browser-test.sh

## Benchmarks: a table on screen and benchmarks/results/latest.json (a few minutes), then grading a class
## of 100 hand-ins in sandboxes (benchmarks/grading.py, about 2 minutes on 2 cores).
bench: $(STAMP)
	$(PY) benchmarks/run.py $(BENCH_ARGS)
	$(PY) benchmarks/players.py
	$(PY) benchmarks/grading.py

## Regenerate every .ipynb from its .md and execute it (NB=path.md for one page).
notebooks: $(STAMP)
	$(PY) -m booktools build $(NB)

## The Chinese edition: sync zh/notebooks/*.md into their .ipynb (NB=zh/notebooks/….md for one page):
## refuses a page whose code cells differ from the English page's, executes it in Chinese, keeps the
## English outputs but the localised ones, and records the English prose in zh/synced.toml
## (ZH_ARGS=--prose: no kernel, the stored Chinese verdicts kept).
zh: $(STAMP)
	$(PY) -m booktools build --edition zh $(ZH_ARGS) $(NB)

## Rebuild fixtures/ from the recipes (booktools/recipes/; `labkit fixtures` takes them from the clone).
fixtures: $(STAMP)
	$(VENV)/bin/labkit fixtures build

## The published static site (downloads the book theme: needs the internet): the English edition
## at /, then the Chinese one (zh/myst.yml) at /zh/ of the same site, each page linking to its counterpart.
## The players' page bundles (build products, git-ignored) are written first; after mystmd, the
## theme's CDN assets (npm registry, cached in build/npm) and a CJK web font are served from the site.
## The PDF first (offline: myst build --tex, XeLaTeX; apt-get install --no-install-recommends texlive-xetex).
book: $(STAMP)
	$(PY) -m booktools build --pdf
	$(PY) -m booktools build --site

## The book as a PDF, offline: _build/pdf/inside-one-generation.pdf (about 45 s).
pdf: $(STAMP)
	$(PY) -m booktools build --pdf

## Check every page offline: notebook pairs, glossary links, toc, parse errors, references, players,
## for both editions; the zh pages' code and outputs against the English ones (a failure), and a
## warning naming each zh page whose English prose changed after it was synced.
book-check: $(STAMP)
	$(PY) -m booktools check

## Style: ruff's rules (line length, complexity) and its formatter, checked not applied.
LINTED := labkit classroom booktools booklab harness tests benchmarks $(wildcard answer_key)
lint: $(STAMP)
	$(VENV)/bin/ruff check $(LINTED)
	$(VENV)/bin/ruff format --check $(LINTED)

## A copy of the book for a class, without the answer key: make class-copy DEST=../class-copy
class-copy: $(STAMP)
	$(if $(DEST),,$(error give the copy a folder: make class-copy DEST=../class-copy))
	$(PY) -m classroom copy $(DEST)

## Grade a folder of hand-ins, each in its own sandbox (bubblewrap): make grade HANDINS=handins OUT=grades.csv
## (GRADE_ARGS=… passes more, e.g. --points points.toml or --workers 4).
grade: $(STAMP)
	$(if $(HANDINS),,$(error name the hand-ins: make grade HANDINS=handins OUT=grades.csv))
	$(if $(OUT),,$(error name the grades file: make grade HANDINS=handins OUT=grades.csv))
	$(PY) -m classroom grade $(HANDINS) --out $(OUT) $(GRADE_ARGS)

clean:
	rm -rf build _build .pytest_cache
