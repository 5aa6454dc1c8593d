"""A Schema Registry inside the broker, as Confluent's clients call it (docs/SCHEMA_REGISTRY.md).

The registry is an engine over one compacted topic (``_schemas``): ``state.py`` is what the
topic's records say (subjects, versions, ids, configs, modes), ``engine.py`` answers the REST
API's questions and turns each change into records, which ``store.py`` appends through the
partition's one write path before the state takes them. ``formats.py`` parses Avro, JSON
Schema and Protobuf with their libraries (imported on first use, from the
``kipper[schema-registry]`` extra) and ``compat.py`` applies the compatibility levels.
The HTTP shell that serves it is ``broker/registry_http/``.
"""
