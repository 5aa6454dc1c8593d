"""StreamsGroupHeartbeat (API key 88, KIP-1071): a Kafka Streams member joins, heartbeats
and leaves its streams group; the answer carries its active, standby and warm-up tasks.

Version 1 (KIP-1331) adds TopologyDescriptionRequired and AcceptableRecoveryLag to the
answer, and lets the broker send the MISSING_CLIENT_TAGS status.
"""

from kipper.protocol.schema import Api, F

STREAMS_GROUP_HEARTBEAT = Api(
    key=88, name='StreamsGroupHeartbeat', valid='0-1', flexible='0+',
    request=(
        F('group_id', 'string'),
        F('member_id', 'string'),
        F('member_epoch', 'int32'),
        F('endpoint_information_epoch', 'int32'),
        F('instance_id', 'string', nullable='0+', default=None),
        F('rack_id', 'string', nullable='0+', default=None),
        F('rebalance_timeout_ms', 'int32', default=-1),
        F('topology', '{}', nullable='0+', default=None, fields=(
            F('epoch', 'int32'),
            F('subtopologies', '[]', fields=(
                F('subtopology_id', 'string'),
                F('source_topics', '[]string'),
                F('source_topic_regex', '[]string'),
                F('state_changelog_topics', '[]', fields=(
                    F('name', 'string'),
                    F('partitions', 'int32'),
                    F('replication_factor', 'int16'),
                    F('topic_configs', '[]', fields=(
                        F('key', 'string'),
                        F('value', 'string'),
                    )),
                )),
                F('repartition_sink_topics', '[]string'),
                F('repartition_source_topics', '[]', fields=(
                    F('name', 'string'),
                    F('partitions', 'int32'),
                    F('replication_factor', 'int16'),
                    F('topic_configs', '[]', fields=(
                        F('key', 'string'),
                        F('value', 'string'),
                    )),
                )),
                F('copartition_groups', '[]', fields=(
                    F('source_topics', '[]int16'),
                    F('source_topic_regex', '[]int16'),
                    F('repartition_source_topics', '[]int16'),
                )),
            )),
        )),
        F('active_tasks', '[]', nullable='0+', default=None, fields=(
            F('subtopology_id', 'string'),
            F('partitions', '[]int32'),
        )),
        F('standby_tasks', '[]', nullable='0+', default=None, fields=(
            F('subtopology_id', 'string'),
            F('partitions', '[]int32'),
        )),
        F('warmup_tasks', '[]', nullable='0+', default=None, fields=(
            F('subtopology_id', 'string'),
            F('partitions', '[]int32'),
        )),
        F('process_id', 'string', nullable='0+', default=None),
        F('user_endpoint', '{}', nullable='0+', default=None, fields=(
            F('host', 'string'),
            F('port', 'uint16'),
        )),
        F('client_tags', '[]', nullable='0+', default=None, fields=(
            F('key', 'string'),
            F('value', 'string'),
        )),
        F('task_offsets', '[]', nullable='0+', default=None, fields=(
            F('subtopology_id', 'string'),
            F('partition', 'int32'),
            F('offset', 'int64'),
        )),
        F('task_end_offsets', '[]', nullable='0+', default=None, fields=(
            F('subtopology_id', 'string'),
            F('partition', 'int32'),
            F('offset', 'int64'),
        )),
        F('shutdown_application', 'bool', default=False),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16'),
        F('error_message', 'string', nullable='0+', default=None),
        F('member_id', 'string'),
        F('member_epoch', 'int32'),
        F('heartbeat_interval_ms', 'int32'),
        F('acceptable_recovery_lag_legacy', 'int32', '0'),
        F('task_offset_interval_ms', 'int32'),
        F('acceptable_recovery_lag', 'int64', '1+', default=-1),
        F('status', '[]', nullable='0+', fields=(
            F('status_code', 'int8'),
            F('status_detail', 'string'),
        )),
        F('active_tasks', '[]', nullable='0+', default=None, fields=(
            F('subtopology_id', 'string'),
            F('partitions', '[]int32'),
        )),
        F('standby_tasks', '[]', nullable='0+', default=None, fields=(
            F('subtopology_id', 'string'),
            F('partitions', '[]int32'),
        )),
        F('warmup_tasks', '[]', nullable='0+', default=None, fields=(
            F('subtopology_id', 'string'),
            F('partitions', '[]int32'),
        )),
        F('topology_description_required', 'bool', '1+', default=False),
        F('endpoint_information_epoch', 'int32'),
        F('partitions_by_user_endpoint', '[]', nullable='0+', default=None, fields=(
            F('user_endpoint', '{}', fields=(
                F('host', 'string'),
                F('port', 'uint16'),
            )),
            F('active_partitions', '[]', fields=(
                F('topic', 'string'),
                F('partitions', '[]int32'),
            )),
            F('standby_partitions', '[]', fields=(
                F('topic', 'string'),
                F('partitions', '[]int32'),
            )),
        )),
    ),
)
