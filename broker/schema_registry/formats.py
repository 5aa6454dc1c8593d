"""The three schema types behind one call, their libraries imported on first use.

``parse(schema_type, text, dependencies, references, is_new)`` returns the parsed schema
(``canonical`` text, ``references``, ``normalized()``, ``formatted(fmt)``,
``backward_errors(previous)``) or raises ``InvalidSchema`` with Confluent's message. A
broker without the ``kipper[schema-registry]`` extra imports none of this;
``missing_libraries()`` says what the extra would bring, for the broker's refusal at start.
"""

from __future__ import annotations

import importlib
import importlib.util

from kipper.broker.schema_registry.model import AVRO, JSON, PROTOBUF, Reference

MODULES = {AVRO: "kipper.broker.schema_registry.avro_format",
           JSON: "kipper.broker.schema_registry.json_format",
           PROTOBUF: "kipper.broker.schema_registry.protobuf_format"}
LIBRARIES = {"avro": "avro", "jsonschema": "jsonschema", "google.protobuf": "protobuf",
             "grpc_tools": "grpcio-tools"}
EXTRA = "kipper[schema-registry]"


class InvalidSchema(ValueError):
    pass


def missing_libraries() -> list[str]:
    """The distributions of the extra that cannot be imported here (found without importing)."""
    missing = []
    for module, dist in LIBRARIES.items():
        try:
            if importlib.util.find_spec(module) is None:
                missing.append(dist)
        except (ImportError, ValueError):
            missing.append(dist)
    return missing


def preload() -> None:
    """Import every format with its library now (a process that forks brokers does it once
    for all of them)."""
    for name in MODULES.values():
        importlib.import_module(name)


def parse(schema_type: str, text: str, dependencies: dict[str, str], references: tuple[Reference, ...] = (),
          *, is_new: bool):
    if schema_type not in MODULES:
        raise InvalidSchema(f"Invalid schema type {schema_type}")
    module = importlib.import_module(MODULES[schema_type])
    try:
        return module.parse(text, dependencies, references, is_new=is_new)
    except module.InvalidSchema as exc:
        raise InvalidSchema(f"Invalid schema of type {schema_type}, details: {exc}") from None
    except RecursionError:
        raise InvalidSchema(f"Invalid schema of type {schema_type}, details: nested too deeply") from None
