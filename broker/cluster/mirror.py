"""Keeps a node's TopicManager equal to the cluster image: the topics the metadata log made.

Every node of a cluster holds every topic in its TopicManager (the broker/log registry the
handlers read), with all its partitions, so that Metadata, the group coordinators' topic
lookups and the configs answer alike everywhere; which of them this broker stores and leads
is the replicas' business (broker/cluster/replica.py). ``sync_topic`` creates, grows,
reconfigures or deletes one topic to match the image; the controller and the brokers call it
for each topic a batch of records touched.
"""

from __future__ import annotations

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})


def sync_topic(image, topics, name: str, on_delete=None) -> tuple[object | None, list]:
    """Bring ``name`` in ``topics`` (a TopicManager) to what ``image`` says: (the Topic or
    None, the partitions added). ``on_delete(topic)`` removes a topic the image no longer
    has (Engines.delete_topic: its committed offsets and share state go too)."""
    info = image.topics.get(name)
    topic = topics.get(name)
    if topic is not None and (info is None or info.topic_id != topic.topic_id):
        (on_delete or (lambda t: topics.forget(t.name)))(topic)
        topic = None
    if info is None:
        return None, []
    count = len(info.partitions)
    configs = dict(image.topic_configs(name))
    if topic is None:
        topic = topics.adopt(name, info.topic_id, count, configs, name in INTERNAL_TOPICS)
        return topic, list(topic.partitions)
    added = []
    if count > len(topic.partitions):
        added = topics.adopt_partitions(topic, count)
    if configs != topic.configs:
        topics.adopt_configs(topic, configs)
    return topic, added
