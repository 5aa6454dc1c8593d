"""StreamsGroupHeartbeat (API key 88, KIP-1071): a Kafka Streams member joins, heartbeats
and leaves its streams group; the answer carries its active, standby and warm-up tasks.

Version 1 (KIP-1331) adds TopologyDescriptionRequired and AcceptableRecoveryLag to the
answer, and lets the broker send the MISSING_CLIENT_TAGS status.
"""

from kipper.protocol.messages.streams_structs import endpoint, key_values, task_ids, task_offsets, topic_infos, topic_partitions
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
                topic_infos('state_changelog_topics'),
                F('repartition_sink_topics', '[]string'),
                topic_infos('repartition_source_topics'),
                F('copartition_groups', '[]', fields=(
                    F('source_topics', '[]int16'),
                    F('source_topic_regex', '[]int16'),
                    F('repartition_source_topics', '[]int16'),
                )),
            )),
        )),
        task_ids('active_tasks', nullable='0+', default=None),
        task_ids('standby_tasks', nullable='0+', default=None),
        task_ids('warmup_tasks', nullable='0+', default=None),
        F('process_id', 'string', nullable='0+', default=None),
        endpoint('user_endpoint', nullable='0+', default=None),
        key_values('client_tags', nullable='0+', default=None),
        task_offsets('task_offsets', nullable='0+', default=None),
        task_offsets('task_end_offsets', nullable='0+', default=None),
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
        task_ids('active_tasks', nullable='0+', default=None),
        task_ids('standby_tasks', nullable='0+', default=None),
        task_ids('warmup_tasks', nullable='0+', default=None),
        F('topology_description_required', 'bool', '1+', default=False),
        F('endpoint_information_epoch', 'int32'),
        F('partitions_by_user_endpoint', '[]', nullable='0+', default=None, fields=(
            endpoint('user_endpoint'),
            topic_partitions('active_partitions'),
            topic_partitions('standby_partitions'),
        )),
    ),
)
