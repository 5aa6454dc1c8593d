"""A step's call on one broker: the client its ``client`` names, with that broker's address, as
a super user over PLAINTEXT (``ANONYMOUS``) or, where the step says ``"as": "user"``, as the
sequence's own user ``<T>-u0`` over SASL/SCRAM, whom only the ACLs the sequence made allow
anything."""

from __future__ import annotations

from tests.conformance.client_fuzz import aiokafka_admin, confluent, kafka_python, pure_python

PASSWORD = "<T>-secret"  # the sequence's user's (steps.setup makes its credential)


def settings(ref, style: str, user: str | None) -> dict:
    """One broker's client settings in the client's own spelling."""
    if style == "confluent":
        if user is None:
            return {"bootstrap.servers": ref.bootstrap}
        return {"bootstrap.servers": ref.sasl_bootstrap, "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": user,
                "sasl.password": PASSWORD.replace("<T>", user.rsplit("-", 1)[0])}
    if user is None:
        return {"bootstrap_servers": ref.bootstrap}
    return {"bootstrap_servers": ref.sasl_bootstrap, "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": "SCRAM-SHA-256", "sasl_plain_username": user,
            "sasl_plain_password": PASSWORD.replace("<T>", user.rsplit("-", 1)[0])}


PURE_PYTHON = {"kafka-python-producer": pure_python.kafka_python_produce,
               "aiokafka-producer": pure_python.aiokafka_produce,
               "kafka-python-consumer": pure_python.kafka_python_consume,
               "aiokafka-consumer": pure_python.aiokafka_consume}


def call(ref, step: dict, token: str):
    """What ``step`` (its names already the sequence's) returned on the broker ``ref``."""
    user = f"{token}-u0" if step.get("as") == "user" else None
    client, op, args = step["client"], step["op"], step.get("args", {})
    if client == "confluent-admin":
        return confluent.admin(settings(ref, "confluent", user), op, args)
    if client == "confluent-producer":
        return confluent.produce(settings(ref, "confluent", user), args)
    if client == "confluent-consumer":
        return confluent.consume(settings(ref, "confluent", user), args)
    if client == "confluent-share-consumer":
        return confluent.share_consume(settings(ref, "confluent", user), args)
    if client == "kafka-python-admin":
        return kafka_python.admin(settings(ref, "kafka-python", user), op, args)
    if client in PURE_PYTHON:  # (aiokafka spells its settings as kafka-python does)
        return PURE_PYTHON[client](settings(ref, "kafka-python", user), args)
    if client == "aiokafka-admin":  # (aiokafka spells its settings as kafka-python does)
        return aiokafka_admin.admin(settings(ref, "kafka-python", user), op, args)
    raise ValueError(f"no client {client}")
