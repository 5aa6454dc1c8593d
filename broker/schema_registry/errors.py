"""Confluent Schema Registry's errors: an HTTP status, an ``error_code`` and a message,
sent as ``{"error_code": ..., "message": ...}`` (Confluent's ``Errors`` and RestException
classes; 409 for an incompatible schema, as Confluent 7.x-8.0 and the clients' tests say)."""

from __future__ import annotations


class RegistryError(Exception):
    def __init__(self, status: int, error_code: int, message: str):
        super().__init__(message)
        self.status = status
        self.error_code = error_code
        self.message = message

    def body(self) -> dict:
        return {"error_code": self.error_code, "message": self.message}


COMPATIBILITY_LEVELS = ("NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE",
                        "FULL", "FULL_TRANSITIVE")
MODES = ("READWRITE", "READONLY", "READONLY_OVERRIDE", "IMPORT")


def subject_not_found(subject) -> RegistryError:
    return RegistryError(404, 40401, f"Subject '{subject}' not found.")


def version_not_found(version) -> RegistryError:
    return RegistryError(404, 40402, f"Version {version} not found.")


def schema_not_found(key=None) -> RegistryError:
    return RegistryError(404, 40403, "Schema not found" if key is None else f"Schema {key} not found")


def subject_soft_deleted(subject) -> RegistryError:
    return RegistryError(404, 40404, f"Subject '{subject}' was soft deleted.Set permanent=true to delete permanently")


def subject_not_soft_deleted(subject) -> RegistryError:
    return RegistryError(404, 40405, f"Subject '{subject}' was not deleted first before being permanently deleted")


def version_soft_deleted(subject, version) -> RegistryError:
    return RegistryError(404, 40406, f"Subject '{subject}' Version {version} was soft deleted."
                                     "Set permanent=true to delete permanently")


def version_not_soft_deleted(subject, version) -> RegistryError:
    return RegistryError(404, 40407, f"Subject '{subject}' Version {version} was not deleted first "
                                     "before being permanently deleted")


def subject_compatibility_not_configured(subject) -> RegistryError:
    return RegistryError(404, 40408, f"Subject '{subject}' does not have subject-level compatibility configured")


def subject_mode_not_configured(subject) -> RegistryError:
    return RegistryError(404, 40409, f"Subject '{subject}' does not have subject-level mode configured")


def incompatible(subject: str, details: str) -> RegistryError:
    return RegistryError(409, 409, f"Schema being registered is incompatible with an earlier schema for "
                                   f"subject \"{subject}\", details: {details}")


def invalid_schema(message: str) -> RegistryError:
    return RegistryError(422, 42201, message)


def invalid_version(version) -> RegistryError:
    return RegistryError(422, 42202, f"The specified version '{version}' is not a valid version id. "
                                     "Allowed values are between [1, 2^31-1] and the string \"latest\"")


def invalid_compatibility() -> RegistryError:
    return RegistryError(422, 42203, "Invalid compatibility level. Valid values are none, backward, forward, "
                                     "full, backward_transitive, forward_transitive, and full_transitive")


def invalid_mode() -> RegistryError:
    return RegistryError(422, 42204, "Invalid mode. Valid values are READWRITE, READONLY, READONLY_OVERRIDE "
                                     "and IMPORT.")


def not_permitted(message: str) -> RegistryError:
    return RegistryError(422, 42205, message)


def reference_exists(subject: str, version: int) -> RegistryError:
    return RegistryError(422, 42206, "One or more references exist to the schema "
                                     f"{{magic=1,keytype=SCHEMA,subject={subject},version={version}}}.")


def invalid_subject(subject) -> RegistryError:
    return RegistryError(422, 42208, f"The specified subject '{subject}' is not a valid.")


def store_error(message: str) -> RegistryError:
    return RegistryError(500, 50001, message)


def bad_request(message: str) -> RegistryError:
    """A body that is not JSON, or not the JSON the route takes (Jersey's 400/422)."""
    return RegistryError(400, 400, message)


def unprocessable(message: str) -> RegistryError:
    return RegistryError(422, 422, message)
