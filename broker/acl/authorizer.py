"""Authorization with Kafka's StandardAuthorizer semantics.

A request by ``principal`` from ``host`` to do ``operation`` on a resource is:

1. allowed for a super user (``super.users``);
2. denied if a DENY ACL matches (its operation, or ALL);
3. allowed if an ALLOW ACL matches (its operation, ALL, or one that implies it);
4. otherwise allowed only when no ACL at all names the resource and
   ``allow.everyone.if.no.acl.found`` is true (Kafka's default: false).

An ACL matches a resource when it is LITERAL with the resource's name or the
wildcard ``*``, or PREFIXED with a prefix of the name; and the request when its
principal is the request's or ``User:*`` and its host is the client's address,
``*``, or a CIDR network holding the address (broker/acl/cidr.py). ACLs are indexed
by resource type and name (a dict for literal names, a dict of prefixes looked up
with every prefix of the name), so a decision costs a
few lookups however many ACLs there are; sessions also cache decisions until
the ACLs change (``version``).
"""

from __future__ import annotations

from collections import defaultdict

from kipper.broker.acl import cidr
from kipper.broker.acl.model import (
    ALL, ALLOW, DENY, LITERAL, PREFIXED, SUPPORTED, WILDCARD, AclBinding, AclFilter, allowed_by,
)


class Authorizer:
    def __init__(self, *, super_users=(), allow_everyone_if_no_acl_found: bool = False):
        self.super_users = frozenset(super_users)
        self.allow_if_none = allow_everyone_if_no_acl_found
        self.version = 0
        self._acls: set[AclBinding] = set()
        self._literal: dict[tuple[int, str], list[AclBinding]] = {}
        self._prefixed: dict[int, dict[str, list[AclBinding]]] = {}

    # --- the ACLs ------------------------------------------------------------------------------

    def acls(self) -> list[AclBinding]:
        return sorted(self._acls)

    def add(self, acls) -> int:
        added = [a for a in acls if a not in self._acls]
        self._acls.update(added)
        if added:
            self._reindex()
        return len(added)

    def remove(self, filters: list[AclFilter]) -> list[list[AclBinding]]:
        """Each filter's matches among the ACLs as they were (a request's filters all see the
        same ACLs, as Kafka's controller's deleteAcls), and every one of them removed."""
        matched = self.matches(filters)
        gone = {a for found in matched for a in found}
        if gone:
            self._acls.difference_update(gone)
            self._reindex()
        return matched

    def matches(self, filters: list[AclFilter]) -> list[list[AclBinding]]:
        """Each filter's matches, sorted; nothing removed."""
        return [sorted(a for a in self._acls if f.matches(a)) for f in filters]

    def replace(self, acls) -> None:
        self._acls = set(acls)
        self._reindex()

    def _reindex(self) -> None:
        literal: dict[tuple[int, str], list[AclBinding]] = defaultdict(list)
        prefixed: dict[int, dict[str, list[AclBinding]]] = defaultdict(lambda: defaultdict(list))
        for a in self._acls:
            if a.pattern_type == LITERAL:
                literal[(a.resource_type, a.name)].append(a)
            elif a.pattern_type == PREFIXED:
                prefixed[a.resource_type][a.name].append(a)
        self._literal = dict(literal)
        self._prefixed = {rt: dict(by) for rt, by in prefixed.items()}
        self.version += 1

    def matching(self, resource_type: int, name: str) -> list[AclBinding]:
        """Every ACL that applies to the resource (any principal, host or operation)."""
        out = list(self._literal.get((resource_type, name), ()))
        out += self._literal.get((resource_type, WILDCARD), ())
        prefixes = self._prefixed.get(resource_type)
        if prefixes:
            for end in range(1, len(name) + 1):
                found = prefixes.get(name[:end])
                if found:
                    out += found
        return out

    # --- decisions -----------------------------------------------------------------------------

    def authorize(self, principal: str, host: str, operation: int, resource_type: int, name: str) -> bool:
        if principal in self.super_users:
            return True
        acls = self.matching(resource_type, name)
        if not acls:
            return self.allow_if_none
        allowing = allowed_by(operation)
        allowed = False
        for a in acls:
            if a.principal != principal and a.principal != "User:*":
                continue
            if not _host_matches(a.host, host):
                continue
            if a.permission == DENY and (a.operation == operation or a.operation == ALL):
                return False
            if a.permission == ALLOW and a.operation in allowing:
                allowed = True
        return allowed

    def authorize_any(self, principal: str, host: str, operation: int, resource_type: int) -> bool:
        """Kafka's authorizeByResourceType: some ALLOW of the operation on some resource of
        the type, unless a DENY of it covers every resource of the type (LITERAL *)."""
        if principal in self.super_users:
            return True
        allowing = allowed_by(operation)
        found = False
        for a in self._acls:
            if a.resource_type != resource_type:
                continue
            if (a.principal != principal and a.principal != "User:*") or not _host_matches(a.host, host):
                continue
            if a.permission == DENY and a.name == WILDCARD and a.pattern_type == LITERAL and \
                    a.operation in (operation, ALL):
                return False
            if a.permission == ALLOW and a.operation in allowing:
                found = True
        return found or (self.allow_if_none and not any(a.resource_type == resource_type for a in self._acls))

    def authorized_operations(self, principal: str, host: str, resource_type: int, name: str) -> int:
        """Kafka's bit set (1 << operation code) of what the principal may do there."""
        bits = 0
        for op in SUPPORTED.get(resource_type, ()):
            if self.authorize(principal, host, op, resource_type, name):
                bits |= 1 << op
        return bits


def _host_matches(acl_host: str, host: str) -> bool:
    """An ACL's host holds the client's: the same text, ``*``, or a CIDR network of it."""
    return acl_host == host or acl_host == WILDCARD or cidr.in_range(host, acl_host)
