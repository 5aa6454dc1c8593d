"""How `make test` hands the suite to its pytest-xdist workers (tests/conftest.py uses these
hooks; tests/integration/test_watchdog.py runs them on a suite that hangs).

`make test` runs the suite on two workers (-n 2 --dist loadscope --no-loadscope-reorder),
handing out units of work: each test module is one, so its module fixtures start once, and
the suites around one long-lived session fixture are one unit each, so that fixture starts
once too (a Spark cluster, loadgen runs and a JVM; Apache Kafka beside a kipper set up
alike). Those go first, the longest first, while the modules fill in around them. (xdist's
own --dist loadgroup cannot do this under pytest 9.2, which no longer lets a plugin rename a
test's node id: the scheduler below cuts the units itself.) A worker that crashes (the
watchdog ends a hung one) has its test reported failed once, and the rest of its unit goes
to the live workers.
"""

from __future__ import annotations
LONG_UNITS = (("tests/spark/", "spark"), ("tests/conformance/", "kafka-reference"),
              ("tests/java_ecosystem/", "kafka-reference"), ("tests/client_suites/", "client-suites"))


def work_unit(nodeid: str) -> str:
    path = nodeid.split("::", 1)[0]
    return next((unit for prefix, unit in LONG_UNITS if path.startswith(prefix)), path)


def pytest_collection_modifyitems(items):
    first = {unit: rank for rank, unit in enumerate(dict.fromkeys(unit for _, unit in LONG_UNITS))}
    items.sort(key=lambda item: first.get(work_unit(item.nodeid), len(first)))


def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class WorkUnits(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

        def remove_node(self, node):
            """A crashed worker's test (a hang the watchdog ended) counts as done, so it is
            reported failed once instead of hanging the next worker; the rest of its unit
            goes back to the queue for the live workers."""
            workload = self.assigned_work.get(node, {})
            crashed = next((nodeid for unit in workload.values() for nodeid, done in unit.items() if not done), None)
            if crashed is None:
                return super().remove_node(node)
            for unit in workload.values():
                if crashed in unit:
                    unit[crashed] = True
            super().remove_node(node)
            return crashed

    return WorkUnits(config, log)


