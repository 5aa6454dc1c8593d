"""Data contracts carried with a schema: its metadata (tags, properties, sensitive fields)
and rule set, merged with a config's defaults and overrides as Confluent merges them. The
registry keeps and returns them; the rules run in the clients."""

from __future__ import annotations


def property_of(metadata: dict | None, name: str):
    return ((metadata or {}).get("properties") or {}).get(name)


def merge_metadata(base: dict | None, top: dict | None) -> dict | None:
    if base is None:
        return top
    if top is None:
        return base
    out = {}
    for part in ("tags", "properties"):
        merged = {**(base.get(part) or {}), **(top.get(part) or {})}
        if merged:
            out[part] = merged
    sensitive = sorted(set(base.get("sensitive") or ()) | set(top.get("sensitive") or ()))
    if sensitive:
        out["sensitive"] = sensitive
    return out


def merge_rules(base: dict | None, top: dict | None) -> dict | None:
    """Rules of the same name in ``top`` replace ``base``'s, per kind (Confluent's mergeRuleSets)."""
    if base is None:
        return top
    if top is None:
        return base
    out = {}
    for kind in ("migrationRules", "domainRules", "encodingRules"):
        rules = {r.get("name"): r for r in base.get(kind) or ()}
        rules.update({r.get("name"): r for r in top.get(kind) or ()})
        if rules:
            out[kind] = list(rules.values())
    return out
