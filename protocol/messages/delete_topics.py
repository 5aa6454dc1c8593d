"""DeleteTopics (API key 20)."""

from kipper.protocol.schema import Api, F

DELETE_TOPICS = Api(
    key=20, name='DeleteTopics', valid='1-6', flexible='4+',
    request=(
        F('topics', '[]', '6+', fields=(
            F('name', 'string', '6+', nullable='6+', default=None),
            F('topic_id', 'uuid', '6+'),
        )),
        F('topic_names', '[]string', '0-5'),
        F('timeout_ms', 'int32'),
    ),
    response=(
        F('throttle_time_ms', 'int32', '1+'),
        F('responses', '[]', fields=(
            F('name', 'string', nullable='6+'),
            F('topic_id', 'uuid', '6+'),
            F('error_code', 'int16'),
            F('error_message', 'string', '5+', nullable='5+', default=None),
        )),
    ),
)
