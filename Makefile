# `make book` and `make test` work on a fresh machine with only Python >= 3.11:
# they create .venv (again when pyproject.toml changes), install, then build or test.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: book instructor test test-fast lint release clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -e '.[book,grading,dev]'
	@touch $(STAMP)

book: $(STAMP)
	$(BIN)/mlcourse build

instructor: $(STAMP)
	$(BIN)/mlcourse build --instructor --out _build/instructor

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadgroup

# Everything but the slow tests (book builds, grading batches, fresh installs): seconds, not minutes.
test-fast: $(STAMP)
	$(BIN)/python -m pytest -n 2 -m "not slow"

release: $(STAMP)
	$(BIN)/mlcourse release

clean:
	rm -rf _build
