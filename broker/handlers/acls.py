"""DescribeAcls, CreateAcls and DeleteAcls over the broker's authorizer (broker/acl/).

Without an authorizer they answer SECURITY_DISABLED, as Kafka does. Creating or
deleting ACLs needs ALTER on the cluster, describing them DESCRIBE on the
cluster (CLUSTER_AUTHORIZATION_FAILED otherwise). Filters match as Kafka's
AclBindingFilter: ANY and null match everything, MATCH every ACL that would
apply to a resource of the given name.
"""

from __future__ import annotations

from kipper.broker.acl.model import (
    ALTER, ANY_OPERATION, ANY_PERMISSION, ANY_RESOURCE, CIDR_SINCE, CLUSTER, CLUSTER_NAME, DESCRIBE,
    OPERATION_NAMES, PERMISSION_NAMES, PREFIXED, RESOURCE_NAMES, AclBinding, AclFilter, validate,
)
from kipper.broker.features import METADATA_NAMES, METADATA_VERSION
from kipper.protocol.errors import ErrorCode

CIDR_LEVEL = next(level for level, name in METADATA_NAMES.items() if name == CIDR_SINCE)

DISABLED = "No Authorizer is configured on the broker (authorizer.class.name)"


def _filter(f) -> AclFilter:
    return AclFilter(f.resource_type_filter, f.resource_name_filter, f.get("pattern_type_filter", 3),
                     f.principal_filter, f.host_filter, f.operation, f.permission_type)


def _unknown_filter(f) -> str | None:
    """Kafka's controller's refusal of a DeleteAcls filter naming a code it does not know
    (its UNKNOWN: a resource or pattern type, an operation or a permission type), or None."""
    if (f.resource_type_filter != ANY_RESOURCE and f.resource_type_filter not in RESOURCE_NAMES
            or not ANY_RESOURCE <= f.get("pattern_type_filter", 3) <= PREFIXED):
        return "Unknown patternFilter."
    if (f.operation != ANY_OPERATION and f.operation not in OPERATION_NAMES
            or f.permission_type != ANY_PERMISSION and f.permission_type not in PERMISSION_NAMES):
        return "Unknown entryFilter."
    return None


def binding_of(creation) -> AclBinding:
    """A CreateAcls creation's ACL."""
    c = creation
    return AclBinding(c.resource_type, c.resource_name, c.get("resource_pattern_type", 3),
                      c.principal, c.host, c.operation, c.permission_type)


def matched_binding(m) -> AclBinding:
    """One of a DeleteAcls answer's matching ACLs."""
    return AclBinding(m.resource_type, m.resource_name, m.pattern_type, m.principal, m.host,
                      m.operation, m.permission_type)


def handle_describe_acls(req, ctx):
    acls = ctx.engines.acls
    if not acls.enabled:
        return {"throttle_time_ms": 0, "error_code": int(ErrorCode.SECURITY_DISABLED),
                "error_message": DISABLED, "resources": []}
    if not acls.authorize(ctx.session, DESCRIBE, CLUSTER, CLUSTER_NAME, "DescribeAcls"):
        return {"throttle_time_ms": 0, "error_code": int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
                "error_message": ctx.needs_permission("DESCRIBE"), "resources": []}
    wanted = _filter(req)
    by_resource: dict[tuple, list] = {}
    for a in acls.bindings():
        if wanted.matches(a):
            by_resource.setdefault((a.resource_type, a.name, a.pattern_type), []).append(
                {"principal": a.principal, "host": a.host, "operation": a.operation,
                 "permission_type": a.permission})
    # "" where Kafka leaves error_message unset (its schema's default), as in CreateAcls
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": "", "resources": [
        {"resource_type": t, "resource_name": n, "pattern_type": p, "acls": rows}
        for (t, n, p), rows in sorted(by_resource.items())]}


def handle_create_acls(req, ctx):
    acls = ctx.engines.acls
    if not acls.enabled:
        return {"throttle_time_ms": 0, "results": [
            {"error_code": int(ErrorCode.SECURITY_DISABLED), "error_message": DISABLED}
            for _ in req.creations]}
    if not acls.authorize(ctx.session, ALTER, CLUSTER, CLUSTER_NAME, "CreateAcls"):
        return {"throttle_time_ms": 0, "results": [
            {"error_code": int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
             "error_message": ctx.needs_permission("ALTER")} for _ in req.creations]}
    results, valid = [], []
    for c in req.creations:
        acl = binding_of(c)
        refused = validate(acl, cidr_allowed=ctx.engines.features.finalized_level(METADATA_VERSION) >= CIDR_LEVEL)
        if refused is not None and refused[0] == ErrorCode.UNKNOWN_SERVER_ERROR:
            # Kafka reads every creation into an AclBinding before it creates any: one whose
            # constructor throws (an ANY code, a MATCH pattern) fails the whole request, and
            # nothing is created
            return {"throttle_time_ms": 0, "results": [
                {"error_code": int(ErrorCode.UNKNOWN_SERVER_ERROR), "error_message": None} for _ in req.creations]}
        if refused is not None:
            results.append({"error_code": int(refused[0]), "error_message": refused[1]})
        else:
            valid.append(acl)
            results.append({"error_code": 0, "error_message": ""})
    if valid:
        acls.create(valid)
    return {"throttle_time_ms": 0, "results": results}


def handle_delete_acls(req, ctx):
    acls = ctx.engines.acls
    if not acls.enabled:
        return {"throttle_time_ms": 0, "filter_results": [
            {"error_code": int(ErrorCode.SECURITY_DISABLED), "error_message": DISABLED,
             "matching_acls": []} for _ in req.filters]}
    if not acls.authorize(ctx.session, ALTER, CLUSTER, CLUSTER_NAME, "DeleteAcls"):
        return {"throttle_time_ms": 0, "filter_results": [
            {"error_code": int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
             "error_message": ctx.needs_permission("ALTER"), "matching_acls": []} for _ in req.filters]}
    unknown = [_unknown_filter(f) for f in req.filters]
    # every filter matches the ACLs as they were before the request (Kafka's controller)
    matched = iter(acls.delete([_filter(f) for f, why in zip(req.filters, unknown) if why is None]))
    out = []
    for why in unknown:
        if why is not None:
            out.append({"error_code": int(ErrorCode.INVALID_REQUEST), "error_message": why, "matching_acls": []})
            continue
        out.append({"error_code": 0, "error_message": None, "matching_acls": [
            {"error_code": 0, "error_message": None, "resource_type": a.resource_type,
             "resource_name": a.name, "pattern_type": a.pattern_type, "principal": a.principal,
             "host": a.host, "operation": a.operation, "permission_type": a.permission}
            for a in next(matched)]})
    return {"throttle_time_ms": 0, "filter_results": out}
