"""Broker loggers: DescribeConfigs and IncrementalAlterConfigs of a BROKER_LOGGER resource
(``kafka-configs --entity-type broker-loggers``), checked and answered as Kafka's ConfigHelper
and RuntimeLoggerManager do, over kipper's logging. kipper has one logger, ``root``: its level
is the broker's log level (``log.level``), changed at run time and, as on Kafka, not kept over
a restart. Kafka's levels that kipper's logging lacks apply as the nearest it has (TRACE as
DEBUG, FATAL as ERROR) and are described as they were set."""

from __future__ import annotations

from typing import Callable

from kipper.protocol.errors import ErrorCode

ROOT = "root"
LEVELS = ("DEBUG", "ERROR", "FATAL", "INFO", "TRACE", "WARN")  # Kafka's LogLevelConfig, in its texts' order
APPLIED = {"TRACE": "DEBUG", "DEBUG": "DEBUG", "INFO": "INFO", "WARN": "WARNING", "ERROR": "ERROR", "FATAL": "ERROR"}
KAFKA_LEVEL = {"DEBUG": "DEBUG", "INFO": "INFO", "WARNING": "WARN", "ERROR": "ERROR"}  # log.level's, in Kafka's words
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
RESOURCE = "BROKER_LOGGER"


class BrokerLoggers:
    def __init__(self, node_id: int, level: str, apply: Callable[[str], None] | None = None):
        self.node_id = node_id
        self.level = KAFKA_LEVEL[level]
        self._apply = apply  # sets kipper's logging to one of log.level's values

    def loggers(self) -> dict[str, str]:
        """Every logger and its level (Kafka's Log4jController.loggers)."""
        return {ROOT: self.level}

    def describe_problem(self, resource_name: str) -> str | None:
        """Why ConfigHelper refuses to describe this resource name (INVALID_REQUEST), if it does."""
        if not resource_name:
            return "Broker id must not be empty"
        try:
            node = int(resource_name)
        except ValueError:
            return f"Broker id must be an integer, but it is: {resource_name}"
        if node != self.node_id:
            return f"Unexpected broker id, expected {self.node_id} but received {resource_name}"
        return None

    def check(self, resource_name: str, ops) -> tuple[ErrorCode, str] | None:
        """RuntimeLoggerManager's checks, in its order and words: the node id, then each
        operation (an operation type it does not know fails inside it, as on Kafka)."""
        try:
            node = int(resource_name)
        except ValueError:
            return ErrorCode.INVALID_REQUEST, f"Node id must be an integer, but it is: {resource_name}"
        if node != self.node_id:  # (Kafka's text names its own id twice)
            own = self.node_id
            return ErrorCode.INVALID_REQUEST, f"Unexpected node id. Expected {own}, but received {own}"
        for op in ops:
            problem = self._problem(op.config_operation, op.name, op.value)
            if problem is not None:
                return problem
        return None

    def _problem(self, operation: int, name: str, value: str | None) -> tuple[ErrorCode, str | None] | None:
        if operation in (APPEND, SUBTRACT):
            verb = "APPEND" if operation == APPEND else "SUBTRACT"
            return ErrorCode.INVALID_REQUEST, f"{verb} operation is not allowed for the {RESOURCE} resource"
        if operation not in (SET, DELETE):
            return ErrorCode.UNKNOWN_SERVER_ERROR, None
        if name not in self.loggers():
            return ErrorCode.INVALID_CONFIG, f"Logger {name} does not exist!"
        if operation == SET and value not in LEVELS:
            return ErrorCode.INVALID_CONFIG, (f"Cannot set the log level of {name} to {value} as it is not a supported "
                                              f"log level. Valid log levels are {', '.join(LEVELS)}")
        if operation == DELETE and name == ROOT:
            return ErrorCode.INVALID_REQUEST, f"Removing the log level of the {ROOT} logger is not allowed"
        return None

    def apply(self, ops) -> None:
        """The operations, checked: each SET takes effect at once (a DELETE of root is refused,
        and kipper has no other logger)."""
        for op in ops:
            if op.config_operation == SET:
                self.level = op.value
                if self._apply is not None:
                    self._apply(APPLIED[op.value])
