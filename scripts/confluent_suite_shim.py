"""A pytest plugin (``-p confluent_suite_shim``) for running confluent-kafka-python's own
integration tests against an existing cluster (their ``BROKERS`` and ``SR_URL``), here kipper.

Their harness makes a cluster with trivup unless BROKERS is set, and imports trivup either
way; where it is not installed (it needs setuptools' pkg_resources) a stand-in module lets
the import succeed, and refuses to start a cluster. Their ``ByoFixture`` (the fixture for a
cluster given by BROKERS) has no ``async_schema_registry``, which their async Schema
Registry tests call: it is given the one their trivup fixture has, on the same URL. And
the tests that need a cluster of an older Confluent Platform (SR_URL_7_0_1) are left out,
with that reason. Nothing else of theirs is changed.
"""

from __future__ import annotations

import importlib.util
import sys
import types

import pytest

# a test id (or its prefix) -> why it does not run against a cluster given by BROKERS
NEEDS_OTHER_CLUSTER = {
    "test_api_get_register_schema_invalid[kafka_cluster_cp_7_0_1":
        "asserts the HTTP 500 a Confluent Platform 7.0.1 registry gave for an invalid schema; it needs "
        "that second cluster (BROKERS_7_0_1/SR_URL_7_0_1). Confluent since 7.0.2, and kipper, answer 422/42201, "
        "which the kafka_cluster case of the same test checks",
}


def _stand_in_trivup() -> None:
    try:
        if importlib.util.find_spec("trivup") is not None:
            import trivup.clusters.KafkaCluster  # noqa: F401
            return
    except ImportError:
        pass

    class KafkaCluster:
        def __init__(self, *args, **kwargs):
            raise RuntimeError("trivup is not available here: set BROKERS (and SR_URL) to run against a cluster")

    package = types.ModuleType("trivup")
    clusters = types.ModuleType("trivup.clusters")
    module = types.ModuleType("trivup.clusters.KafkaCluster")
    module.KafkaCluster = KafkaCluster
    package.clusters, clusters.KafkaCluster = clusters, module
    sys.modules.update({"trivup": package, "trivup.clusters": clusters, "trivup.clusters.KafkaCluster": module})


_stand_in_trivup()


def _give_byo_an_async_registry() -> None:
    fixture = sys.modules.get("tests.integration.cluster_fixture")
    if fixture is None:
        return
    byo = fixture.ByoFixture
    if not hasattr(byo, "async_schema_registry"):
        from confluent_kafka.schema_registry._async.schema_registry_client import AsyncSchemaRegistryClient

        def async_schema_registry(self, conf=None):
            if self._sr_url is None:
                raise RuntimeError("No Schema-registry available in Byo cluster")
            return AsyncSchemaRegistryClient({"url": self._sr_url, **(conf or {})})

        byo.async_schema_registry = async_schema_registry


def pytest_collection_modifyitems(config, items):
    _give_byo_an_async_registry()
    kept, left_out = [], []
    for item in items:
        reason = next((why for prefix, why in NEEDS_OTHER_CLUSTER.items() if item.name.startswith(prefix)), None)
        (left_out if reason else kept).append(item)
        if reason:
            config.hook.pytest_deselected(items=[item])
            print(f"\nleft out: {item.nodeid}: {reason}")
    items[:] = kept


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    _give_byo_an_async_registry()
