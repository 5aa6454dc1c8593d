"""LeaveGroup (API key 13)."""

from kipper.protocol.schema import Api, F

LEAVE_GROUP = Api(
    key=13, name='LeaveGroup', valid='0-5', flexible='4+',
    request=(
        F('group_id', 'string'),
        F('member_id', 'string', '0-2'),
        F('members', '[]', '3+', fields=(
            F('member_id', 'string', '3+'),
            F('group_instance_id', 'string', '3+', nullable='3+', default=None),
            F('reason', 'string', '5+', nullable='5+', default=None),
        )),
    ),
    response=(
        F('throttle_time_ms', 'int32', '1+'),
        F('error_code', 'int16'),
        F('members', '[]', '3+', fields=(
            F('member_id', 'string', '3+'),
            F('group_instance_id', 'string', '3+', nullable='3+'),
            F('error_code', 'int16', '3+'),
        )),
    ),
)
