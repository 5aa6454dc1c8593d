"""StreamsGroupDescribe (API key 89, KIP-1071): streams groups, their topology and members.

Version 1 (KIP-1331, KIP-1357) adds the topology description and the assignor's name.
"""

from kipper.protocol.schema import Api, F

STREAMS_GROUP_DESCRIBE = Api(
    key=89, name='StreamsGroupDescribe', valid='0-1', flexible='0+',
    request=(
        F('group_ids', '[]string'),
        F('include_authorized_operations', 'bool'),
        F('include_topology_description', 'bool', '1+', default=False),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('groups', '[]', fields=(
            F('error_code', 'int16'),
            F('error_message', 'string', nullable='0+', default=None),
            F('group_id', 'string'),
            F('group_state', 'string'),
            F('group_epoch', 'int32'),
            F('assignment_epoch', 'int32'),
            F('topology', '{}', nullable='0+', default=None, fields=(
                F('epoch', 'int32'),
                F('subtopologies', '[]', nullable='0+', default=None, fields=(
                    F('subtopology_id', 'string'),
                    F('source_topics', '[]string'),
                    F('repartition_sink_topics', '[]string'),
                    F('state_changelog_topics', '[]', fields=(
                        F('name', 'string'),
                        F('partitions', 'int32'),
                        F('replication_factor', 'int16'),
                        F('topic_configs', '[]', fields=(
                            F('key', 'string'),
                            F('value', 'string'),
                        )),
                    )),
                    F('repartition_source_topics', '[]', fields=(
                        F('name', 'string'),
                        F('partitions', 'int32'),
                        F('replication_factor', 'int16'),
                        F('topic_configs', '[]', fields=(
                            F('key', 'string'),
                            F('value', 'string'),
                        )),
                    )),
                )),
            )),
            F('members', '[]', fields=(
                F('member_id', 'string'),
                F('member_epoch', 'int32'),
                F('instance_id', 'string', nullable='0+', default=None),
                F('rack_id', 'string', nullable='0+', default=None),
                F('client_id', 'string'),
                F('client_host', 'string'),
                F('topology_epoch', 'int32'),
                F('process_id', 'string'),
                F('user_endpoint', '{}', nullable='0+', default=None, fields=(
                    F('host', 'string'),
                    F('port', 'uint16'),
                )),
                F('client_tags', '[]', fields=(
                    F('key', 'string'),
                    F('value', 'string'),
                )),
                F('task_offsets', '[]', fields=(
                    F('subtopology_id', 'string'),
                    F('partition', 'int32'),
                    F('offset', 'int64'),
                )),
                F('task_end_offsets', '[]', fields=(
                    F('subtopology_id', 'string'),
                    F('partition', 'int32'),
                    F('offset', 'int64'),
                )),
                F('assignment', '{}', fields=(
                    F('active_tasks', '[]', fields=(
                        F('subtopology_id', 'string'),
                        F('partitions', '[]int32'),
                    )),
                    F('standby_tasks', '[]', fields=(
                        F('subtopology_id', 'string'),
                        F('partitions', '[]int32'),
                    )),
                    F('warmup_tasks', '[]', fields=(
                        F('subtopology_id', 'string'),
                        F('partitions', '[]int32'),
                    )),
                )),
                F('target_assignment', '{}', fields=(
                    F('active_tasks', '[]', fields=(
                        F('subtopology_id', 'string'),
                        F('partitions', '[]int32'),
                    )),
                    F('standby_tasks', '[]', fields=(
                        F('subtopology_id', 'string'),
                        F('partitions', '[]int32'),
                    )),
                    F('warmup_tasks', '[]', fields=(
                        F('subtopology_id', 'string'),
                        F('partitions', '[]int32'),
                    )),
                )),
                F('is_classic', 'bool'),
            )),
            F('authorized_operations', 'int32', default=-2147483648),
            F('topology_description', '{}', '1+', nullable='1+', default=None, fields=(
                F('subtopologies', '[]', '1+', fields=(
                    F('subtopology_id', 'string', '1+'),
                    F('nodes', '[]', '1+', fields=(
                        F('name', 'string', '1+'),
                        F('node_type', 'int8', '1+'),
                        F('source_topics', '[]string', '1+'),
                        F('sink_topic', 'string', '1+', nullable='1+', default=None),
                        F('stores', '[]string', '1+'),
                        F('successors', '[]string', '1+'),
                    )),
                )),
                F('global_stores', '[]', '1+', fields=(
                    F('source', '{}', '1+', fields=(
                        F('name', 'string', '1+'),
                        F('node_type', 'int8', '1+'),
                        F('source_topics', '[]string', '1+'),
                        F('sink_topic', 'string', '1+', nullable='1+', default=None),
                        F('stores', '[]string', '1+'),
                        F('successors', '[]string', '1+'),
                    )),
                    F('processor', '{}', '1+', fields=(
                        F('name', 'string', '1+'),
                        F('node_type', 'int8', '1+'),
                        F('source_topics', '[]string', '1+'),
                        F('sink_topic', 'string', '1+', nullable='1+', default=None),
                        F('stores', '[]string', '1+'),
                        F('successors', '[]string', '1+'),
                    )),
                )),
            )),
            F('topology_description_status', 'int8', '1+', default=0),
            F('assignor_name', 'string', '1+', nullable='1+', default=None),
        )),
    ),
)
