# `make book` and `make test` work on a fresh machine with only Python >= 3.11:
# they create .venv (again when pyproject.toml changes), install, then build or test.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# axe-core (npm, major version 4) for the accessibility checks of tests/test_website.py, installed
# into the git-ignored .tools/ (never fetched at build or test time).
AXE := .tools/node_modules/axe-core/axe.min.js

.PHONY: book instructor test test-fast lint release clean

# tools/install.py runs pip with a line of progress at least every 20 s (pip's own output goes
# to .venv/pip.log).
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || { echo "creating $(VENV) with $$($(PYTHON) --version)"; $(PYTHON) -m venv $(VENV); }
	@$(PYTHON) tools/install.py $(BIN)/python -e '.[book,grading,dev]'
	@touch $(STAMP)

book: $(STAMP)
	$(BIN)/mlcourse build

instructor: $(STAMP)
	$(BIN)/mlcourse build --instructor --out _build/instructor

$(AXE):
	@if command -v npm >/dev/null 2>&1; then \
		npm install --prefix .tools --no-save --no-audit --no-fund --loglevel=error axe-core@4; \
	else echo "npm not found: install it (apt-get install npm) for the accessibility checks" >&2; fi

test: $(STAMP) $(AXE)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n 2 --dist loadgroup --no-loadscope-reorder

# Everything but the slow tests (book builds, grading batches, fresh installs): seconds, not minutes.
test-fast: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n 2 -m "not slow"

release: $(STAMP)
	$(BIN)/mlcourse release

clean:
	rm -rf _build
