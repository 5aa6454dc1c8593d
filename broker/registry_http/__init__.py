"""The Schema Registry's HTTP shell: ``schema.registry.listeners`` (docs/SCHEMA_REGISTRY.md).

``server.py`` serves Confluent's REST API on the broker's shared HTTP listener pieces
(``broker/http_listener.py``): it parses requests and content types, authenticates with HTTP
Basic against the broker's SCRAM users, and runs each route on the event loop. ``routes.py``
maps a path to one question or change of the registry engine (``broker/schema_registry``);
``access.py`` says which Kafka ACL each route needs.
"""
