"""StreamsGroupDescribe (API key 89, KIP-1071): streams groups, their topology and members.

Version 1 (KIP-1331, KIP-1357) adds the topology description and the assignor's name.
"""

from kipper.protocol.messages.streams_structs import endpoint, key_values, task_ids, task_offsets, topic_infos, topology_nodes
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
                    topic_infos('state_changelog_topics'),
                    topic_infos('repartition_source_topics'),
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
                endpoint('user_endpoint', nullable='0+', default=None),
                key_values('client_tags'),
                task_offsets('task_offsets'),
                task_offsets('task_end_offsets'),
                F('assignment', '{}', fields=(
                    task_ids('active_tasks'),
                    task_ids('standby_tasks'),
                    task_ids('warmup_tasks'),
                )),
                F('target_assignment', '{}', fields=(
                    task_ids('active_tasks'),
                    task_ids('standby_tasks'),
                    task_ids('warmup_tasks'),
                )),
                F('is_classic', 'bool'),
            )),
            F('authorized_operations', 'int32', default=-2147483648),
            F('topology_description', '{}', '1+', nullable='1+', default=None, fields=(
                F('subtopologies', '[]', '1+', fields=(
                    F('subtopology_id', 'string', '1+'),
                    topology_nodes('nodes', '[]'),
                )),
                F('global_stores', '[]', '1+', fields=(
                    topology_nodes('source', '{}'),
                    topology_nodes('processor', '{}'),
                )),
            )),
            F('topology_description_status', 'int8', '1+', default=0),
            F('assignor_name', 'string', '1+', nullable='1+', default=None),
        )),
    ),
)
