# Two commands do all the setup on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP_RUN := $(VENV)/.installed-run
STAMP_TEST := $(VENV)/.installed-test

.PHONY: run test bench clean spark-env

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP_RUN): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(STAMP_TEST): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev,interop,spark]'
	@command -v java >/dev/null 2>&1 || { echo "installing Java for Spark"; \
		(apt-get update -qq && apt-get install -y -qq openjdk-17-jre-headless) || \
		(sudo apt-get update -qq && sudo apt-get install -y -qq openjdk-17-jre-headless); }
	touch $@ $(STAMP_RUN)

run: $(STAMP_RUN)
	$(BIN)/kipper broker $(ARGS)

test: $(STAMP_TEST)
	$(BIN)/python -m pytest -q $(PYTEST_ARGS); status=$$?; \
	if [ $$status -eq 5 ]; then echo "no tests were collected: failing"; exit 1; fi; exit $$status

# the executors' Python for a Spark cluster: kipper and confluent-kafka, packed with venv-pack (docs/SPARK.md)
spark-env: $(STAMP_TEST)
	$(BIN)/python -m kipper.spark_jobs.pack_env --output dist/kipper-spark-env.tar.gz

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
