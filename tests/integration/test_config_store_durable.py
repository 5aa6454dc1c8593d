"""A durable broker without config.dir keeps users, quotas and ACLs in its first log
directory, whose ``.lock`` it holds while it runs: changing them must not wait on that
lock (it once hung the broker's event loop for good)."""

from __future__ import annotations

from kipper.client import admin
from kipper.client.blocking import connect_any
from tests.support.broker import BrokerProcess


def test_alter_client_quotas_on_a_durable_broker_without_config_dir_answers_and_persists(tmp_path):
    with BrokerProcess({"log.dirs": str(tmp_path / "data")}) as broker:
        with connect_any(broker.bootstrap, timeout=10) as conn:
            body = admin.alter_client_quotas(conn, [admin.ClientQuotaAlteration({"user": "alice"},
                                                                                {"producer_ids_rate": 5.0})])
            assert [e.error_code for e in body.entries] == [0]
        broker.restart()
        with connect_any(broker.bootstrap, timeout=10) as conn:
            found = admin.describe_client_quotas(conn, [admin.ClientQuotaFilterComponent.of_entity("user", "alice")],
                                                 strict=True)
            assert [(v.key, v.value) for e in found.entries for v in e["values"]] == [("producer_ids_rate", 5.0)]
    assert (tmp_path / "data" / "quotas.json").exists()
