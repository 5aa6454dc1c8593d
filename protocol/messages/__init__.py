"""Registry of every API kipper speaks: (api_key, version) -> schemas.

Each module declares one API once; ``APIS`` maps the key to it. The broker's
ApiVersions answer is generated from this registry.
"""

from __future__ import annotations

from kipper.protocol.messages.add_offsets_to_txn import ADD_OFFSETS_TO_TXN
from kipper.protocol.messages.add_partitions_to_txn import ADD_PARTITIONS_TO_TXN
from kipper.protocol.messages.allocate_producer_ids import ALLOCATE_PRODUCER_IDS
from kipper.protocol.messages.alter_client_quotas import ALTER_CLIENT_QUOTAS
from kipper.protocol.messages.alter_configs import ALTER_CONFIGS
from kipper.protocol.messages.alter_partition import ALTER_PARTITION
from kipper.protocol.messages.alter_partition_reassignments import ALTER_PARTITION_REASSIGNMENTS
from kipper.protocol.messages.alter_share_group_offsets import ALTER_SHARE_GROUP_OFFSETS
from kipper.protocol.messages.alter_user_scram_credentials import ALTER_USER_SCRAM_CREDENTIALS
from kipper.protocol.messages.api_versions import API_VERSIONS
from kipper.protocol.messages.broker_heartbeat import BROKER_HEARTBEAT
from kipper.protocol.messages.broker_registration import BROKER_REGISTRATION
from kipper.protocol.messages.consumer_group_describe import CONSUMER_GROUP_DESCRIBE
from kipper.protocol.messages.consumer_group_heartbeat import CONSUMER_GROUP_HEARTBEAT
from kipper.protocol.messages.create_acls import CREATE_ACLS
from kipper.protocol.messages.create_partitions import CREATE_PARTITIONS
from kipper.protocol.messages.create_topics import CREATE_TOPICS
from kipper.protocol.messages.delegation_tokens import (
    CREATE_DELEGATION_TOKEN, DESCRIBE_DELEGATION_TOKEN, EXPIRE_DELEGATION_TOKEN, RENEW_DELEGATION_TOKEN,
)
from kipper.protocol.messages.delete_acls import DELETE_ACLS
from kipper.protocol.messages.delete_groups import DELETE_GROUPS
from kipper.protocol.messages.delete_records import DELETE_RECORDS
from kipper.protocol.messages.delete_share_group_offsets import DELETE_SHARE_GROUP_OFFSETS
from kipper.protocol.messages.delete_topics import DELETE_TOPICS
from kipper.protocol.messages.describe_acls import DESCRIBE_ACLS
from kipper.protocol.messages.describe_client_quotas import DESCRIBE_CLIENT_QUOTAS
from kipper.protocol.messages.describe_cluster import DESCRIBE_CLUSTER
from kipper.protocol.messages.describe_configs import DESCRIBE_CONFIGS
from kipper.protocol.messages.describe_groups import DESCRIBE_GROUPS
from kipper.protocol.messages.describe_log_dirs import DESCRIBE_LOG_DIRS
from kipper.protocol.messages.describe_producers import DESCRIBE_PRODUCERS
from kipper.protocol.messages.describe_quorum import DESCRIBE_QUORUM
from kipper.protocol.messages.describe_share_group_offsets import DESCRIBE_SHARE_GROUP_OFFSETS
from kipper.protocol.messages.describe_topic_partitions import DESCRIBE_TOPIC_PARTITIONS
from kipper.protocol.messages.describe_transactions import DESCRIBE_TRANSACTIONS
from kipper.protocol.messages.describe_user_scram_credentials import DESCRIBE_USER_SCRAM_CREDENTIALS
from kipper.protocol.messages.elect_leaders import ELECT_LEADERS
from kipper.protocol.messages.end_txn import END_TXN
from kipper.protocol.messages.fetch import FETCH
from kipper.protocol.messages.find_coordinator import FIND_COORDINATOR
from kipper.protocol.messages.get_telemetry_subscriptions import GET_TELEMETRY_SUBSCRIPTIONS
from kipper.protocol.messages.heartbeat import HEARTBEAT
from kipper.protocol.messages.incremental_alter_configs import INCREMENTAL_ALTER_CONFIGS
from kipper.protocol.messages.init_producer_id import INIT_PRODUCER_ID
from kipper.protocol.messages.join_group import JOIN_GROUP
from kipper.protocol.messages.leave_group import LEAVE_GROUP
from kipper.protocol.messages.list_config_resources import LIST_CONFIG_RESOURCES
from kipper.protocol.messages.list_groups import LIST_GROUPS
from kipper.protocol.messages.list_offsets import LIST_OFFSETS
from kipper.protocol.messages.list_partition_reassignments import LIST_PARTITION_REASSIGNMENTS
from kipper.protocol.messages.list_transactions import LIST_TRANSACTIONS
from kipper.protocol.messages.metadata import METADATA
from kipper.protocol.messages.offset_commit import OFFSET_COMMIT
from kipper.protocol.messages.offset_delete import OFFSET_DELETE
from kipper.protocol.messages.offset_fetch import OFFSET_FETCH
from kipper.protocol.messages.offset_for_leader_epoch import OFFSET_FOR_LEADER_EPOCH
from kipper.protocol.messages.produce import PRODUCE
from kipper.protocol.messages.push_telemetry import PUSH_TELEMETRY
from kipper.protocol.messages.sasl_authenticate import SASL_AUTHENTICATE
from kipper.protocol.messages.sasl_handshake import SASL_HANDSHAKE
from kipper.protocol.messages.share_acknowledge import SHARE_ACKNOWLEDGE
from kipper.protocol.messages.share_fetch import SHARE_FETCH
from kipper.protocol.messages.share_group_describe import SHARE_GROUP_DESCRIBE
from kipper.protocol.messages.share_group_heartbeat import SHARE_GROUP_HEARTBEAT
from kipper.protocol.messages.streams_group_describe import STREAMS_GROUP_DESCRIBE
from kipper.protocol.messages.streams_group_heartbeat import STREAMS_GROUP_HEARTBEAT
from kipper.protocol.messages.sync_group import SYNC_GROUP
from kipper.protocol.messages.txn_offset_commit import TXN_OFFSET_COMMIT
from kipper.protocol.messages.unregister_broker import UNREGISTER_BROKER
from kipper.protocol.messages.envelope import ENVELOPE
from kipper.protocol.messages.update_features import UPDATE_FEATURES
from kipper.protocol.messages.write_txn_markers import WRITE_TXN_MARKERS
from kipper.protocol.schema import Api

APIS: dict[int, Api] = {
    api.key: api
    for api in (
        PRODUCE, FETCH, LIST_OFFSETS, METADATA, OFFSET_COMMIT, OFFSET_FETCH,
        FIND_COORDINATOR, JOIN_GROUP, HEARTBEAT, LEAVE_GROUP, SYNC_GROUP,
        DESCRIBE_GROUPS, LIST_GROUPS, SASL_HANDSHAKE, API_VERSIONS, CREATE_TOPICS,
        DELETE_TOPICS, DELETE_RECORDS, INIT_PRODUCER_ID, ADD_PARTITIONS_TO_TXN,
        ADD_OFFSETS_TO_TXN, END_TXN, WRITE_TXN_MARKERS, TXN_OFFSET_COMMIT,
        DESCRIBE_CONFIGS, INCREMENTAL_ALTER_CONFIGS, SASL_AUTHENTICATE, DESCRIBE_CLIENT_QUOTAS,
        ALTER_CLIENT_QUOTAS, CONSUMER_GROUP_HEARTBEAT, CONSUMER_GROUP_DESCRIBE, SHARE_GROUP_HEARTBEAT,
        SHARE_GROUP_DESCRIBE, SHARE_FETCH, SHARE_ACKNOWLEDGE,
        DESCRIBE_USER_SCRAM_CREDENTIALS, ALTER_USER_SCRAM_CREDENTIALS,
        DESCRIBE_ACLS, CREATE_ACLS, DELETE_ACLS,
        ALTER_CONFIGS, DESCRIBE_LOG_DIRS, CREATE_PARTITIONS, DELETE_GROUPS, OFFSET_DELETE,
        DESCRIBE_CLUSTER, DESCRIBE_PRODUCERS, DESCRIBE_TRANSACTIONS, LIST_TRANSACTIONS,
        DESCRIBE_SHARE_GROUP_OFFSETS, ALTER_SHARE_GROUP_OFFSETS, DELETE_SHARE_GROUP_OFFSETS,
        DESCRIBE_TOPIC_PARTITIONS, STREAMS_GROUP_HEARTBEAT, STREAMS_GROUP_DESCRIBE, UPDATE_FEATURES,
        GET_TELEMETRY_SUBSCRIPTIONS, PUSH_TELEMETRY, LIST_CONFIG_RESOURCES,
        ELECT_LEADERS, DESCRIBE_QUORUM,
        CREATE_DELEGATION_TOKEN, RENEW_DELEGATION_TOKEN, EXPIRE_DELEGATION_TOKEN, DESCRIBE_DELEGATION_TOKEN,
        # a cluster's APIs (docs/CLUSTER.md)
        OFFSET_FOR_LEADER_EPOCH, BROKER_REGISTRATION, BROKER_HEARTBEAT, ALTER_PARTITION,
        ALLOCATE_PRODUCER_IDS, UNREGISTER_BROKER, ALTER_PARTITION_REASSIGNMENTS,
        LIST_PARTITION_REASSIGNMENTS, ENVELOPE,
    )
}


def compile_all() -> None:
    """Compile every supported (api, version) up front, e.g. at broker start."""
    for api in APIS.values():
        api.compile_supported()
