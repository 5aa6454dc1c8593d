"""Request handlers: small functions of (request, context), one file per API
family. ``HANDLERS`` maps API keys to them; the ApiVersions answer covers
exactly these keys. Produce's handler answers a run of requests
(broker/dispatcher.py, protocol/produce_codec.py)."""

from __future__ import annotations

from kipper.broker.handlers.acls import handle_create_acls, handle_delete_acls, handle_describe_acls
from kipper.broker.handlers.alter_configs import handle_alter_configs, handle_incremental_alter_configs
from kipper.broker.handlers.api_versions import handle_api_versions
from kipper.broker.handlers.cluster import handle_describe_cluster, handle_describe_log_dirs
from kipper.broker.handlers.client_quotas import handle_alter_client_quotas, handle_describe_client_quotas
from kipper.broker.handlers.controller_apis import (
    handle_allocate_producer_ids, handle_alter_partition, handle_alter_partition_reassignments,
    handle_broker_heartbeat, handle_broker_registration, handle_list_partition_reassignments,
    handle_metadata_fetch, handle_unregister_broker,
)
from kipper.broker.handlers.coordinators import KEYS as COORDINATED_APIS, coordinated
from kipper.broker.handlers.consumer_group import (
    handle_consumer_group_describe, handle_consumer_group_heartbeat,
)
from kipper.broker.handlers.delegation_tokens import (
    handle_create_delegation_token, handle_describe_delegation_token, handle_expire_delegation_token,
    handle_renew_delegation_token,
)
from kipper.broker.handlers.delete_records import handle_delete_records
from kipper.broker.handlers.describe_configs import handle_describe_configs
from kipper.broker.handlers.describe_topic_partitions import handle_describe_topic_partitions
from kipper.broker.handlers.features import handle_update_features
from kipper.broker.handlers.fetch import handle_fetch
from kipper.broker.handlers.find_coordinator import handle_find_coordinator
from kipper.broker.handlers.envelope import enveloped
from kipper.broker.handlers.forward import configs_forwarded, handle_enveloped, handle_forwarded
from kipper.broker.handlers.groups import (
    handle_delete_groups, handle_describe_groups, handle_heartbeat, handle_join_group,
    handle_leave_group, handle_list_groups, handle_offset_delete, handle_sync_group,
)
from kipper.broker.handlers.list_offsets import handle_list_offsets
from kipper.broker.handlers.metadata import handle_metadata
from kipper.broker.handlers.offset_for_leader_epoch import handle_offset_for_leader_epoch
from kipper.broker.handlers.offsets import handle_offset_commit, handle_offset_fetch
from kipper.broker.handlers.produce import handle_produce
from kipper.broker.handlers.reassignments import (
    handle_alter_reassignments_here, handle_list_reassignments_here, handle_unregister_broker_here,
)
from kipper.broker.handlers.quorum import handle_describe_quorum, handle_elect_leaders
from kipper.broker.handlers.producer_ids import handle_init_producer_id
from kipper.broker.handlers.sasl import handle_sasl_authenticate, handle_sasl_handshake
from kipper.broker.handlers.scram_credentials import (
    handle_alter_user_scram_credentials, handle_describe_user_scram_credentials,
)
from kipper.broker.handlers.share_acknowledge import handle_share_acknowledge
from kipper.broker.handlers.share_fetch import handle_share_fetch
from kipper.broker.handlers.share_group import handle_share_group_describe, handle_share_group_heartbeat
from kipper.broker.handlers.streams_group import handle_streams_group_describe, handle_streams_group_heartbeat
from kipper.broker.handlers.share_offsets import (
    handle_alter_share_group_offsets, handle_delete_share_group_offsets,
    handle_describe_share_group_offsets,
)
from kipper.broker.handlers.telemetry import (
    handle_get_telemetry_subscriptions, handle_list_config_resources, handle_push_telemetry,
)
from kipper.broker.handlers.topics import handle_create_partitions, handle_create_topics, handle_delete_topics
from kipper.broker.handlers.txn_admin import (
    handle_describe_producers, handle_describe_transactions, handle_list_transactions,
)
from kipper.broker.handlers.txn import (
    handle_add_offsets_to_txn, handle_add_partitions_to_txn, handle_end_txn,
    handle_txn_offset_commit, handle_write_txn_markers,
)

HANDLERS = {
    0: handle_produce,
    1: handle_fetch,
    2: handle_list_offsets,
    3: handle_metadata,
    8: handle_offset_commit,
    9: handle_offset_fetch,
    10: handle_find_coordinator,
    11: handle_join_group,
    12: handle_heartbeat,
    13: handle_leave_group,
    14: handle_sync_group,
    15: handle_describe_groups,
    16: handle_list_groups,
    17: handle_sasl_handshake,
    18: handle_api_versions,
    19: handle_create_topics,
    20: handle_delete_topics,
    21: handle_delete_records,
    22: handle_init_producer_id,
    23: handle_offset_for_leader_epoch,
    24: handle_add_partitions_to_txn,
    25: handle_add_offsets_to_txn,
    26: handle_end_txn,
    27: handle_write_txn_markers,
    28: handle_txn_offset_commit,
    29: handle_describe_acls,
    30: handle_create_acls,
    31: handle_delete_acls,
    32: handle_describe_configs,
    33: handle_alter_configs,
    35: handle_describe_log_dirs,
    36: handle_sasl_authenticate,
    37: handle_create_partitions,
    42: handle_delete_groups,
    38: handle_create_delegation_token,
    39: handle_renew_delegation_token,
    40: handle_expire_delegation_token,
    41: handle_describe_delegation_token,
    43: handle_elect_leaders,
    44: handle_incremental_alter_configs,
    45: handle_alter_reassignments_here,
    46: handle_list_reassignments_here,
    47: handle_offset_delete,
    48: handle_describe_client_quotas,
    49: handle_alter_client_quotas,
    50: handle_describe_user_scram_credentials,
    51: handle_alter_user_scram_credentials,
    57: handle_update_features,
    55: handle_describe_quorum,
    60: handle_describe_cluster,
    61: handle_describe_producers,
    64: handle_unregister_broker_here,
    65: handle_describe_transactions,
    66: handle_list_transactions,
    68: handle_consumer_group_heartbeat,
    69: handle_consumer_group_describe,
    71: handle_get_telemetry_subscriptions,
    72: handle_push_telemetry,
    74: handle_list_config_resources,
    75: handle_describe_topic_partitions,
    76: handle_share_group_heartbeat,
    77: handle_share_group_describe,
    78: handle_share_fetch,
    79: handle_share_acknowledge,
    88: handle_streams_group_heartbeat,
    89: handle_streams_group_describe,
    90: handle_describe_share_group_offsets,
    91: handle_alter_share_group_offsets,
    92: handle_delete_share_group_offsets,
}

# a cluster's broker (docs/CLUSTER.md): what changes the cluster's metadata goes to the controller,
# and a group's or transaction's requests are answered by its coordinator alone
CLUSTER_HANDLERS = {**HANDLERS, **dict.fromkeys((19, 20, 37, 43, 45, 46, 55, 64), handle_forwarded),
                    33: configs_forwarded(handle_alter_configs), 44: configs_forwarded(handle_incremental_alter_configs),
                    **dict.fromkeys((30, 31, 49, 51), handle_enveloped),
                    **{key: coordinated(HANDLERS[key]) for key in COORDINATED_APIS}}

# the controller: the brokers' requests, the metadata log's Fetch, and the topic admin APIs over
# its TopicManager (broker/cluster/controller_topics.py)
CONTROLLER_HANDLERS = {
    **HANDLERS,
    1: handle_metadata_fetch,
    45: handle_alter_partition_reassignments,
    46: handle_list_partition_reassignments,
    56: handle_alter_partition,
    62: handle_broker_registration,
    63: handle_broker_heartbeat,
    64: handle_unregister_broker,
    67: handle_allocate_producer_ids,
}
CONTROLLER_HANDLERS[58] = enveloped(CONTROLLER_HANDLERS)
