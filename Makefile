# Two commands do all the setup on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP_RUN := $(VENV)/.installed-run
STAMP_TEST := $(VENV)/.installed-test

.PHONY: run cluster test java bytecode bench clean spark-env spark-connector conformance-fuzz tools-fuzz clients-fuzz

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP_RUN): pyproject.toml setup.py protocol/_record_scan.c | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[schema-registry]'
	touch $@

$(STAMP_TEST): pyproject.toml setup.py protocol/_record_scan.c | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev,interop,spark,schema-registry]'
	touch $@ $(STAMP_RUN)

# Java where it can be installed without a password prompt; otherwise the Spark tests are
# skipped (and fail under CI=true). Checked on every `make test`: a second run after
# installing Java by hand picks it up.
java:
	@sh scripts/ensure-java.sh

# kipper's sources compiled to bytecode, the files that changed only: where
# PYTHONDONTWRITEBYTECODE is set, every broker start (the tests start many) would compile
# all ~190 modules again (docs/PERFORMANCE.md: 0.38 s to a first connection, 0.23 s without).
# Spark's Kafka connector, resolved once into $${KIPPER_CACHE:-~/.cache/kipper}/spark/ by
# Spark's own resolver (docs/SPARK.md); afterwards the jobs need no network. Where it cannot
# be resolved the connector tests are skipped (and fail under CI=true).
spark-connector: $(STAMP_TEST) java
	@$(BIN)/python -m kipper.spark_jobs.connector --check >/dev/null 2>&1 || sh scripts/spark-connector || \
		echo "Spark's Kafka connector could not be resolved: its tests will be skipped (fail under CI=true)"

bytecode:
	@$(BIN)/python -m compileall -q broker protocol client kipper spark_jobs > /dev/null

# with the Schema Registry on http://127.0.0.1:8081 (ARGS can override it, or empty it: off)
run: $(STAMP_RUN) bytecode
	$(BIN)/kipper broker --override schema.registry.listeners=http://127.0.0.1:8081 $(ARGS)

# a cluster on loopback: a controller and N brokers (docs/CLUSTER.md), ARGS="--brokers 3"
cluster: $(STAMP_RUN) bytecode
	$(BIN)/kipper cluster $(ARGS)

# two workers, each test module one unit of work (tests/conftest.py says how the units are cut);
# the 25 slowest tests are listed at the end, to keep the suite within its budget
TEST_WORKERS ?= 2
test: $(STAMP_TEST) java spark-connector bytecode
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder --durations=25 $(PYTEST_ARGS); status=$$?; \
	if [ $$status -eq 5 ]; then echo "no tests were collected: failing"; exit 1; fi; exit $$status

# the generator's long run against Apache Kafka (docs/CONFORMANCE.md, The generator): minutes to
# hours; prints its figures as it goes and writes each difference, shrunk, to $(FUZZ_OUT)
FUZZ_MINUTES ?= 30
FUZZ_SEED ?= 1
FUZZ_OUT ?= fuzz-findings
conformance-fuzz: $(STAMP_TEST)
	$(BIN)/python -m tests.conformance.fuzz --minutes $(FUZZ_MINUTES) --seed $(FUZZ_SEED) --out $(FUZZ_OUT) $(FUZZ_ARGS)

# the tool generator's long run (docs/CONFORMANCE.md): sequences of Kafka's own command-line
# tools against Kafka and kipper, outcomes compared; findings, shrunk, to $(TOOLS_FUZZ_OUT)
TOOLS_FUZZ_MINUTES ?= 30
TOOLS_FUZZ_SEED ?= 1
TOOLS_FUZZ_OUT ?= tool-findings
tools-fuzz: $(STAMP_TEST)
	$(BIN)/python -m tests.java_ecosystem.tool_fuzz --minutes $(TOOLS_FUZZ_MINUTES) --seed $(TOOLS_FUZZ_SEED) \
		--out $(TOOLS_FUZZ_OUT) $(TOOLS_FUZZ_ARGS)

# the client generator (docs/CONFORMANCE.md): sequences of the Python clients' calls against
# Kafka and kipper, what the clients returned compared; findings, shrunk, to $(CLIENTS_FUZZ_OUT)
CLIENTS_FUZZ_MINUTES ?= 30
CLIENTS_FUZZ_SEED ?= 1
CLIENTS_FUZZ_OUT ?= client-findings
clients-fuzz: $(STAMP_TEST)
	$(BIN)/python -m tests.conformance.client_fuzz --minutes $(CLIENTS_FUZZ_MINUTES) --seed $(CLIENTS_FUZZ_SEED) \
		--out $(CLIENTS_FUZZ_OUT) $(CLIENTS_FUZZ_ARGS)

# the executors' Python for a Spark cluster: kipper and confluent-kafka, packed with venv-pack (docs/SPARK.md)
spark-env: $(STAMP_TEST)
	$(BIN)/python -m kipper.spark_jobs.pack_env --output dist/kipper-spark-env.tar.gz

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
