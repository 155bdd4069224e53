# The two commands of the README: `make demo` (set up, then a real scorecard) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test check docs bench mutation

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[torch,test,docs]'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(BIN)/kata grade auc_roc --impl solution
	@echo
	@echo "That was the reference solution. Now it is your turn:"
	@echo "  $(BIN)/kata list                 # every kata"
	@echo "  $(BIN)/kata show auc_roc         # read the prompt (--lang zh-TW for 中文)"
	@echo "  edit katas/auc_roc/auc.py"
	@echo "  $(BIN)/pytest katas/auc_roc      # graded like an online assessment"

# Three workers on two cores: many tests wait on threads or clocks, and a third worker fills
# that idle time; work stealing keeps the last minute from running on one core.
test: setup
	$(BIN)/ruff check .
	$(BIN)/python -m pytest tests -n 3 --dist worksteal -q

# For contributors: one kata's meta-tests (reference passes, stub and every mutant fail, metadata
# complete) in a minute or two, where `make test` takes 7-8.
ifneq ($(filter check,$(MAKECMDGOALS)),)
ifndef KATA
$(error usage: make check KATA=<kata>, one of: $(notdir $(wildcard katas/*)))
endif
endif
check: setup
	$(BIN)/ruff check katas/$(KATA) solutions/$(KATA) harness/suites/$(KATA)
	$(BIN)/python -m pytest tests/test_katas.py -k $(KATA) -q

docs: setup
	$(BIN)/mkdocs serve

# Regenerates the figures the docs show: every kata's benchmark, then the ToyLM's (CPU).
bench: setup
	for kata in $$(ls katas); do $(BIN)/kata bench $$kata --out docs/benchmarks || exit 1; done
	$(BIN)/python tools/toylm_bench.py --device cpu --out docs/benchmarks/toylm.md

# Mutation testing of every hidden suite (minutes per kata; not part of `make test`): a
# maintainers' script, not in the package. Mutants are written under /tmp/mutation, never into
# solutions/.
mutation: setup
	$(BIN)/python -m pip install --quiet -e '.[mutation]'
	nice -n 19 $(BIN)/python tools/mutation.py $(KATAS) --out docs/benchmarks $(MUTATION_ARGS)
