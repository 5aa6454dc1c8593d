"""The cluster id scripts/kafka_reference.py formats Kafka's storage with: kafka-storage reads
an id that starts with "-" as an option ("expected one argument"), one format in 64, which
failed a whole clean-clone make test's Kafka-side suites once."""

from __future__ import annotations

import base64

from scripts.kafka_reference import _cluster_id


def test_cluster_ids_are_base64url_uuids_that_never_start_with_a_dash():
    ids = [_cluster_id() for _ in range(3000)]  # (about 47 would start with "-" if drawn once)
    assert not [i for i in ids if i.startswith("-")]
    assert all(len(base64.urlsafe_b64decode(i + "==")) == 16 for i in ids)
    assert len(set(ids)) == len(ids)
