# Two commands for a new machine: `make demo` and `make test`. Everything lives in .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: demo test lint typecheck contracts pytest bench messages catalogs screenshots clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	rm -f $(VENV)/.installed-*
	touch $@

demo: $(STAMP)
	$(BIN)/lobby-display demo

lint: $(STAMP)
	$(BIN)/ruff check src tests bench tools
	$(BIN)/ruff format --check src tests bench tools

typecheck: $(STAMP)
	$(BIN)/mypy

contracts: $(STAMP)
	$(BIN)/lint-imports

pytest: $(STAMP)
	TEXTUAL_ANIMATIONS=none $(BIN)/pytest -q

test: lint typecheck contracts pytest

# Everything on this host, then latency and idle on a played slow host (root: a cgroup CPU
# quota; see docs/benchmarks.md).
bench: $(STAMP)
	$(BIN)/python -m bench
	$(BIN)/python -m bench --only latency,idle --slow-host 48

# Re-extract the screen's strings (babel.cfg) into the template and merge them into every .po
# file; then translate the new entries and run `make catalogs`.
messages: $(STAMP)
	$(BIN)/pybabel extract -F babel.cfg --no-location --no-wrap --project=lobby-display \
		--copyright-holder="lobby-display contributors" \
		-o src/lobby_display/locales/lobby_display.pot src/lobby_display
	$(BIN)/pybabel update -D lobby_display -i src/lobby_display/locales/lobby_display.pot \
		-d src/lobby_display/locales --no-wrap --ignore-obsolete

# Recompile the gettext catalogs after editing a .po file (the .mo files are committed).
catalogs: $(STAMP)
	$(BIN)/pybabel compile -d src/lobby_display/locales -D lobby_display

# PNG screenshots for the README from the real kiosk chain (sway headless, foot, grim) into
# docs/screenshots/; as root, with sway, foot, grim, tesseract-ocr and the fonts (.ci/run's).
screenshots: $(STAMP)
	$(BIN)/python tools/screenshots.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
