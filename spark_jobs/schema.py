"""The metrics-dump line as a Spark schema (docs/METRICS.md, schema version 1).

Read with this explicit schema, a line that lacks a section ("quotas" and
"share" come from engines that may not be there) gives nulls, never an error;
fields a newer broker adds are ignored; a line that is not JSON lands in
``_corrupt_record`` and is counted.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType, BooleanType, DoubleType, IntegerType, LongType, MapType, StringType, StructField, StructType,
)


def _struct(**fields) -> StructType:
    return StructType([StructField(name, kind, True) for name, kind in fields.items()])


L, D, S, I = LongType(), DoubleType(), StringType(), IntegerType()

HISTOGRAM = _struct(count=L, sum_us=L, min_us=L, max_us=L, p50_us=L, p99_us=L, buckets=ArrayType(ArrayType(L)))

PARTITION = _struct(topic=S, partition=I, bytes_in=L, records_in=L, bytes_out=L, records_out=L)

PRODUCER_STATE = _struct(mode=S, entries=L, bytes=L, partitions=MapType(S, _struct(entries=L, bytes=L)),
                         duplicates=L, duplicate_sequence_errors=L, out_of_order=L, fencings=L,
                         expired=L)

QUOTA_USER = _struct(user=S, quota=D, producer_id_rate=D, tokens=D, throttle_time_ms=D,
                     admitted=L, throttled=L)

SHARE_PARTITION = _struct(group=S, topic=S, partition=I, spso=L, speo=L, in_flight=L,
                          in_flight_records=L, max_record_locks=L, available=L,
                          acquired=L, acknowledged=L, archived=L, lock_expiries=L,
                          delivery_counts=MapType(S, L))

SHARE_GROUPS = _struct(groups=L, members=L, share_sessions=L, share_partitions_loaded=L,
                       in_flight_records=L, available_records=L, checkpoints_written=L,
                       deltas_written=L, recoveries=L)

TRANSACTIONS = _struct(transactional_ids=L, states=MapType(S, L), commits=L, aborts=L, timed_out=L,
                       fenced=L, expired=L, epoch_bumps=L, open_in_partitions=L, aborted_index_entries=L)

PRODUCER_IDS = _struct(allocated=L, epoch_bumps=L)

CLEANER = _struct(runs=L, bytes_read=L, bytes_written=L, records_removed=L, running=L,
                  partitions=ArrayType(_struct(topic=S, partition=I, dirty_ratio=D)),
                  uncleanable=ArrayType(_struct(topic=S, partition=I, reason=S)))

REFUSED_BATCHES = _struct(total=L, by_error=MapType(S, L))

AUTHORIZER = _struct(enabled=BooleanType(), acls=L, denied=MapType(S, L))

SECURITY = _struct(authentications=_struct(authenticated=L, failed=L), scram_users=L,
                   mechanisms=ArrayType(S))

# lines a loadgen task adds to the metrics topic (--metrics-topic): its kipper producers' figures (seed 001)
CLIENT_PRODUCERS = _struct(client_id=S, producers=L, in_flight_requests=L, requests=L, batches=L, records=L,
                           bytes=L, request_latency_avg_ms=D)

# one (user, client id) a client quota measures (Kafka's ClientQuotaManager sensors)
CLIENT_QUOTA = _struct(user=S, client_id=S, rate=D, quota=D, throttled=L, throttle_ms_total=L)

# feature flags (broker/features.py) and what clients push (KIP-714, broker/telemetry/)
FEATURES = _struct(finalized=MapType(S, I), epoch=L, updates=L)
CLIENT_TELEMETRY = _struct(
    instances=L, subscriptions=L, series=L, subscription_requests=L, pushes=L, throttled=L,
    unknown_subscription=L, decode_errors=L, dropped_series=L, expired=L,
    clients=ArrayType(_struct(client_instance_id=S, client_id=S, client_software_name=S,
                              client_software_version=S, subscription_id=L, pushes=L, last_push_ms=L,
                              metrics=ArrayType(_struct(name=S, attributes=MapType(S, S), kind=S, unit=S,
                                                        value=D, count=L, sum=D)))))

DUMP_LINE = StructType([
    StructField("schema", I, True),
    StructField("ts_ms", L, True),
    StructField("broker_id", I, True),
    StructField("interval_ms", L, True),
    StructField("apis", MapType(S, HISTOGRAM), True),
    StructField("api_versions", MapType(S, MapType(S, L)), True),
    StructField("rejected", MapType(S, L), True),
    StructField("partitions", ArrayType(PARTITION), True),
    StructField("connections", _struct(open=L, accepted=L, closed=L), True),
    StructField("totals", _struct(requests=L, bytes_in=L, records_in=L, bytes_out=L, records_out=L,
                                  connections_accepted=L, connections_closed=L, bytes_out_sendfile=L), True),
    StructField("producer_state", PRODUCER_STATE, True),
    StructField("quotas", _struct(users=ArrayType(QUOTA_USER), users_tracked=L, bloom_bytes=L,
                                  disposed_filters=L, cleaned_users=L, default_quota=D,
                                  quotas=MapType(S, D),
                                  byte_rates=_struct(produce=ArrayType(CLIENT_QUOTA),
                                                     fetch=ArrayType(CLIENT_QUOTA),
                                                     request=ArrayType(CLIENT_QUOTA))), True),
    StructField("share", _struct(partitions=ArrayType(SHARE_PARTITION)), True),
    StructField("share_groups", SHARE_GROUPS, True),
    StructField("transactions", TRANSACTIONS, True),
    StructField("producer_ids", PRODUCER_IDS, True),
    StructField("security", SECURITY, True),
    StructField("cleaner", CLEANER, True),
    StructField("refused_batches", REFUSED_BATCHES, True),
    StructField("authorizer", AUTHORIZER, True),
    StructField("dump", _struct(dropped=L), True),
    StructField("producers", CLIENT_PRODUCERS, True),
    StructField("features", FEATURES, True),
    StructField("client_telemetry", CLIENT_TELEMETRY, True),
    StructField("_corrupt_record", S, True),
])


def field_names(schema: StructType = DUMP_LINE, prefix: str = "") -> list[str]:
    """Dotted names of every field, for the documentation check."""
    out = []
    for f in schema.fields:
        name = prefix + f.name
        out.append(name)
        kind = f.dataType
        while isinstance(kind, (ArrayType, MapType)):
            kind = kind.elementType if isinstance(kind, ArrayType) else kind.valueType
        if isinstance(kind, StructType):
            out += field_names(kind, name + ".")
    return out
