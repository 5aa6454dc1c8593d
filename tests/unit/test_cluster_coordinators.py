"""The coordinator check of a cluster's group and transaction APIs (broker/handlers/
coordinators.py): every request of every served version yields its keys."""

from __future__ import annotations

import pytest

from kipper.broker.handlers.coordinators import KEYS
from kipper.protocol.error_answers import one_of_each
from kipper.protocol.messages import APIS

CASES = [(key, v) for key in KEYS for v in range(APIS[key].min_version, APIS[key].max_version + 1)]


@pytest.mark.parametrize("api_key,version", CASES)
def test_every_coordinated_request_names_its_keys(api_key, version):
    api = APIS[api_key]
    schema = api.request_schema(version)
    request = schema.parse(schema.build(one_of_each(api.request, version)))
    keys_of, _ = KEYS[api_key]
    keys = keys_of(request, version)
    assert all(isinstance(k, str) for k in keys)
    assert keys or api_key == 22  # (an idempotent producer's InitProducerId has no transactional id)
