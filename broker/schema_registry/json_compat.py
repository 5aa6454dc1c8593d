"""Confluent's compatibility rules for JSON Schema.

Two schemas are compared keyword by keyword (``compare(original, update)``); each change
found is a named difference at a JSON path, and a difference type is either one Confluent
counts as compatible or not (``COMPATIBLE_STRICT``; ``COMPATIBLE_LENIENT`` adds the changes
its LENIENT policy allows). ``update`` is compatible as a reader of ``original``'s data when
every difference is a compatible one: a property removed from an open content model is, a
property added to one is not (old data may hold any value under that name), a required
property without a default added is not, a widened type is, and so on, as Confluent's
registry decides (its ``json.diff`` package). The rules are restated here from its behaviour;
the model they walk is ``json_model``.
"""

from __future__ import annotations

import re

from kipper.broker.schema_registry.json_model import Node

COMPATIBLE_STRICT = frozenset("""
ID_CHANGED DESCRIPTION_CHANGED TITLE_CHANGED DEFAULT_CHANGED SCHEMA_REMOVED TYPE_EXTENDED
MAX_LENGTH_INCREASED MAX_LENGTH_REMOVED MIN_LENGTH_DECREASED MIN_LENGTH_REMOVED PATTERN_REMOVED
MAXIMUM_INCREASED MAXIMUM_REMOVED MINIMUM_DECREASED MINIMUM_REMOVED EXCLUSIVE_MAXIMUM_INCREASED
EXCLUSIVE_MAXIMUM_REMOVED EXCLUSIVE_MINIMUM_DECREASED EXCLUSIVE_MINIMUM_REMOVED MULTIPLE_OF_REDUCED
MULTIPLE_OF_REMOVED REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED REQUIRED_ATTRIBUTE_REMOVED
DEPENDENCY_ARRAY_NARROWED DEPENDENCY_ARRAY_REMOVED DEPENDENCY_SCHEMA_REMOVED MAX_PROPERTIES_INCREASED
MAX_PROPERTIES_REMOVED MIN_PROPERTIES_DECREASED MIN_PROPERTIES_REMOVED ADDITIONAL_PROPERTIES_ADDED
ADDITIONAL_PROPERTIES_EXTENDED UNEVALUATED_PROPERTIES_ADDED UNEVALUATED_PROPERTIES_EXTENDED
PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL
OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL
PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL MAX_ITEMS_INCREASED MAX_ITEMS_REMOVED
MIN_ITEMS_DECREASED MIN_ITEMS_REMOVED MAX_CONTAINS_INCREASED MAX_CONTAINS_REMOVED MIN_CONTAINS_DECREASED
MIN_CONTAINS_REMOVED UNIQUE_ITEMS_REMOVED ADDITIONAL_ITEMS_ADDED ADDITIONAL_ITEMS_EXTENDED
UNEVALUATED_ITEMS_ADDED UNEVALUATED_ITEMS_EXTENDED ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL
ITEM_ADDED_TO_CLOSED_CONTENT_MODEL ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL
ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL ENUM_ARRAY_EXTENDED COMBINED_TYPE_EXTENDED
PRODUCT_TYPE_NARROWED SUM_TYPE_EXTENDED NOT_TYPE_NARROWED
""".split())
COMPATIBLE_LENIENT = COMPATIBLE_STRICT | frozenset("""
ADDITIONAL_PROPERTIES_NARROWED ADDITIONAL_PROPERTIES_REMOVED UNEVALUATED_PROPERTIES_NARROWED
UNEVALUATED_PROPERTIES_REMOVED REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL
OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL
PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
""".split())


class Context:
    def __init__(self, compatible: frozenset[str], path: tuple[str, ...] = (), inside: frozenset[int] = frozenset()):
        self.compatible = compatible
        self.path = list(path)
        self.inside = set(inside)  # nodes being compared (a recursive schema stops at itself)
        self.diffs: list[tuple[str, str]] = []

    def sub(self) -> "Context":
        return Context(self.compatible, tuple(self.path), frozenset(self.inside))

    def add(self, kind: str, attribute: str | None = None) -> None:
        path = self.path + ([attribute] if attribute else [])
        self.diffs.append((kind, "#/" + "/".join(path)))

    def compatible_so_far(self) -> bool:
        return all(kind in self.compatible for kind, _ in self.diffs)

    def enter(self, name: str) -> "_Path":
        return _Path(self, name)


class _Path:
    def __init__(self, ctx: Context, name: str):
        self.ctx, self.name = ctx, name

    def __enter__(self):
        self.ctx.path.append(self.name)

    def __exit__(self, *exc):
        self.ctx.path.pop()


def differences(original: Node, update: Node, compatible: frozenset[str] = COMPATIBLE_STRICT) -> list[tuple[str, str]]:
    ctx = Context(compatible)
    compare(ctx, original, update)
    return ctx.diffs


def compare(ctx: Context, original: Node | None, update: Node | None) -> None:
    if original is None and update is None:
        return
    if original is None:
        ctx.add("SCHEMA_ADDED")
        return
    if update is None:
        ctx.add("SCHEMA_REMOVED")
        return
    original, update = _deref(original), _deref(update)
    if original.kind != "combined" and update.kind == "combined" and _compare_with_union(ctx, original, update):
        return
    if original.kind == "combined" and update.kind != "combined" and _compare_with_product(ctx, original, update):
        return
    if original.kind != update.kind:
        if original.kind == "false" or update.is_empty:
            return
        if original.connect_type == "bytes" == update.connect_type:
            return
        ctx.add("TYPE_CHANGED")
        return
    if id(original) in ctx.inside:
        return
    ctx.inside.add(id(original))
    try:
        for attr, kind in (("id", "ID_CHANGED"), ("title", "TITLE_CHANGED"), ("description", "DESCRIPTION_CHANGED")):
            if getattr(original, attr) != getattr(update, attr):
                ctx.add(kind)
        if original.has_default != update.has_default or original.default != update.default:
            ctx.add("DEFAULT_CHANGED")
        COMPARERS.get(original.kind, lambda *_: None)(ctx, original, update)
    finally:
        ctx.inside.discard(id(original))


def _deref(node: Node) -> Node:
    seen = 0
    while node.kind == "ref":
        if node.target is None or seen > 100:
            raise ValueError(f"Unresolved $ref '{node.raw}'")
        node, seen = node.target, seen + 1
    return node


def _compare_with_union(ctx: Context, original: Node, update: Node) -> bool:
    subs, criterion = update.subschemas, update.criterion
    if len(subs) == 1:
        return _adopt_if_compatible(ctx, original, subs[0], None)
    if criterion in ("anyOf", "oneOf"):
        return any(_adopt_if_compatible(ctx, original, s, "SUM_TYPE_EXTENDED") for s in subs)
    return False


def _compare_with_product(ctx: Context, original: Node, update: Node) -> bool:
    subs, criterion = original.subschemas, original.criterion
    if len(subs) == 1:
        return _adopt_if_compatible(ctx, subs[0], update, None)
    if criterion == "allOf":
        return any(_adopt_if_compatible(ctx, s, update, "PRODUCT_TYPE_NARROWED") for s in subs)
    return False


def _adopt_if_compatible(ctx: Context, a: Node, b: Node, extra: str | None) -> bool:
    sub = ctx.sub()
    compare(sub, a, b)
    if not sub.compatible_so_far():
        return False
    ctx.diffs.extend(sub.diffs)
    if extra:
        ctx.add(extra)
    return True


def _bounds(ctx: Context, o: Node, u: Node, attr: str, keyword: str, kinds: str) -> None:
    """ADDED / REMOVED / INCREASED / DECREASED of one limit keyword."""
    a, b = getattr(o, attr), getattr(u, attr)
    if a == b:
        return
    if a is None:
        ctx.add(f"{kinds}_ADDED", keyword)
    elif b is None:
        ctx.add(f"{kinds}_REMOVED", keyword)
    elif float(a) < float(b):
        ctx.add(f"{kinds}_INCREASED", keyword)
    elif float(a) > float(b):
        ctx.add(f"{kinds}_DECREASED", keyword)


def _string(ctx: Context, o: Node, u: Node) -> None:
    _bounds(ctx, o, u, "max_length", "maxLength", "MAX_LENGTH")
    _bounds(ctx, o, u, "min_length", "minLength", "MIN_LENGTH")
    if o.pattern is None and u.pattern is not None:
        ctx.add("PATTERN_ADDED", "pattern")
    elif o.pattern is not None and u.pattern is None:
        ctx.add("PATTERN_REMOVED", "pattern")
    elif o.pattern != u.pattern:
        ctx.add("PATTERN_CHANGED", "pattern")


def _number(ctx: Context, o: Node, u: Node) -> None:
    _bounds(ctx, o, u, "maximum", "maximum", "MAXIMUM")
    _bounds(ctx, o, u, "minimum", "minimum", "MINIMUM")
    _bounds(ctx, o, u, "exclusive_maximum", "exclusiveMaximum", "EXCLUSIVE_MAXIMUM")
    _bounds(ctx, o, u, "exclusive_minimum", "exclusiveMinimum", "EXCLUSIVE_MINIMUM")
    mo, mu = o.multiple_of, u.multiple_of
    if mo != mu:
        if mo is None:
            ctx.add("MULTIPLE_OF_ADDED", "multipleOf")
        elif mu is None:
            ctx.add("MULTIPLE_OF_REMOVED", "multipleOf")
        elif int(mo) and int(mu) % int(mo) == 0:
            ctx.add("MULTIPLE_OF_EXPANDED", "multipleOf")
        elif int(mu) and int(mo) % int(mu) == 0:
            ctx.add("MULTIPLE_OF_REDUCED", "multipleOf")
        else:
            ctx.add("MULTIPLE_OF_CHANGED", "multipleOf")
    if o.integer != u.integer:
        ctx.add("TYPE_EXTENDED" if o.integer else "TYPE_NARROWED")


def _enum(ctx: Context, o: Node, u: Node) -> None:
    vo, vu = o.values, u.values
    if vo != vu:
        ctx.add("ENUM_ARRAY_EXTENDED" if vu >= vo else "ENUM_ARRAY_NARROWED" if vo >= vu else "ENUM_ARRAY_CHANGED",
                "enum")


def _const(ctx: Context, o: Node, u: Node) -> None:
    if o.value != u.value:
        ctx.add("ENUM_ARRAY_CHANGED", "const")


def _not(ctx: Context, o: Node, u: Node) -> None:
    with ctx.enter("not"):
        sub = ctx.sub()
        compare(sub, u.negated, o.negated)  # reversed: what must not match
        ctx.add("NOT_TYPE_NARROWED" if sub.compatible_so_far() else "NOT_TYPE_EXTENDED")


def _combined(ctx: Context, o: Node, u: Node) -> None:
    co, cu = o.criterion, u.criterion
    so, su = o.subschemas, u.subschemas
    if co != cu:
        if cu == "anyOf" or (len(so) == 1 and len(su) == 1) or (len(so) == 1 and cu == "oneOf") \
                or (len(su) == 1 and co == "allOf"):
            ctx.add("COMBINED_TYPE_EXTENDED")
        else:
            ctx.add("COMBINED_TYPE_CHANGED")
            return
    if len(so) < len(su):
        ctx.add("PRODUCT_TYPE_EXTENDED" if cu == "allOf" else "SUM_TYPE_EXTENDED")
    elif len(so) > len(su):
        ctx.add("SUM_TYPE_NARROWED" if co in ("anyOf", "oneOf") else "PRODUCT_TYPE_NARROWED")
    edges: dict[int, dict[int, list]] = {}
    for i, a in enumerate(so):
        with ctx.enter(f"{co}/{i}"):
            for j, b in enumerate(su):
                sub = ctx.sub()
                compare(sub, a, b)
                if sub.compatible_so_far():
                    edges.setdefault(i, {})[j] = sub.diffs
    matching = _max_matching(edges)
    for i, j in matching.items():
        ctx.diffs.extend(edges[i][j])
    if len(matching) < min(len(so), len(su)):
        ctx.add("COMBINED_TYPE_SUBSCHEMAS_CHANGED")


def _max_matching(edges: dict[int, dict[int, list]]) -> dict[int, int]:
    """A maximum bipartite matching (augmenting paths): original index -> update index."""
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges.get(i, {}):
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in edges:
        augment(i, set())
    return {i: j for j, i in owner.items()}


def _object(ctx: Context, o: Node, u: Node) -> None:
    with ctx.enter("required"):
        for name in o.properties:
            if name in u.properties:
                was, now = name in o.required, name in u.required
                if was and not now:
                    ctx.add("REQUIRED_ATTRIBUTE_REMOVED", name)
                elif now and not was:
                    ctx.add("REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED" if u.properties[name].has_default
                            else "REQUIRED_ATTRIBUTE_ADDED", name)
    with ctx.enter("properties"):
        for name in sorted(set(o.properties) | set(u.properties)):
            with ctx.enter(name):
                _property(ctx, o, u, name)
    with ctx.enter("dependencies"):
        _dependencies(ctx, o, u)
    with ctx.enter("additionalProperties"):
        _additional(ctx, o, u, "PROPERTIES")
    _unevaluated(ctx, o.unevaluated_properties, u.unevaluated_properties, "unevaluatedProperties", "PROPERTIES")
    _bounds(ctx, o, u, "max_properties", "maxProperties", "MAX_PROPERTIES")
    _bounds(ctx, o, u, "min_properties", "minProperties", "MIN_PROPERTIES")


def _property(ctx: Context, o: Node, u: Node, name: str) -> None:
    before, after = o.properties.get(name), u.properties.get(name)
    if after is None:
        if open_content(u):
            ctx.add("PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL")
            return
        partial = partially_open(u, name)
        if partial is not None:
            _covered(ctx, before, partial, "PROPERTY_REMOVED")
        elif before.kind == "false":
            ctx.add("PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL")
        else:
            ctx.add("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL")
    elif before is None:
        required = name in u.required
        if open_content(o):
            if after.is_empty:
                ctx.add("PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL")
            elif required:
                ctx.add("REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL" if after.has_default
                        else "REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL")
            else:
                ctx.add("OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL")
            return
        partial = partially_open(o, name)
        if partial is not None:
            _covered(ctx, partial, after, "PROPERTY_ADDED")
        if required:
            ctx.add("REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL" if after.has_default
                    else "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL")
        else:
            ctx.add("OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL")
    else:
        compare(ctx, before, after)


def _covered(ctx: Context, a: Node, b: Node, what: str) -> None:
    sub = ctx.sub()
    compare(sub, a, b)
    ctx.diffs.extend(sub.diffs)
    ctx.add(f"{what}_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL" if sub.compatible_so_far()
            else f"{what}_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL")


def _dependencies(ctx: Context, o: Node, u: Node) -> None:
    po, pu = o.property_dependencies, u.property_dependencies
    for name in sorted(set(po) | set(pu)):
        with ctx.enter(name):
            if name not in pu:
                ctx.add("DEPENDENCY_ARRAY_REMOVED")
            elif name not in po:
                ctx.add("DEPENDENCY_ARRAY_ADDED")
            elif po[name] != pu[name]:
                ctx.add("DEPENDENCY_ARRAY_EXTENDED" if pu[name] >= po[name] else
                        "DEPENDENCY_ARRAY_NARROWED" if po[name] >= pu[name] else "DEPENDENCY_ARRAY_CHANGED")
    so, su = o.schema_dependencies, u.schema_dependencies
    for name in sorted(set(so) | set(su)):
        with ctx.enter(name):
            if name not in su:
                ctx.add("DEPENDENCY_SCHEMA_REMOVED")
            elif name not in so:
                ctx.add("DEPENDENCY_SCHEMA_ADDED")
            else:
                compare(ctx, so[name], su[name])


def _additional(ctx: Context, o: Node, u: Node, what: str) -> None:
    """additionalProperties of objects, additionalItems of arrays."""
    if o.permits_additional != u.permits_additional:
        ctx.add(f"ADDITIONAL_{what}_ADDED" if u.permits_additional else f"ADDITIONAL_{what}_REMOVED")
    elif o.additional is None and u.additional is not None:
        ctx.add(f"ADDITIONAL_{what}_NARROWED")
    elif u.additional is None and o.additional is not None:
        ctx.add(f"ADDITIONAL_{what}_EXTENDED")
    else:
        compare(ctx, o.additional, u.additional)


def _unevaluated(ctx: Context, a: Node | None, b: Node | None, keyword: str, what: str) -> None:
    if a is None and b is None:
        return
    with ctx.enter(keyword):
        if a is None:
            ctx.add(f"UNEVALUATED_{what}_REMOVED" if b.kind == "false" else f"UNEVALUATED_{what}_NARROWED")
        elif b is None:
            ctx.add(f"UNEVALUATED_{what}_ADDED" if a.kind == "false" else f"UNEVALUATED_{what}_EXTENDED")
        elif a.kind == "false" and b.kind != "false":
            ctx.add(f"UNEVALUATED_{what}_ADDED")
        elif a.kind != "false" and b.kind == "false":
            ctx.add(f"UNEVALUATED_{what}_REMOVED")
        elif a.is_empty and not b.is_empty:
            ctx.add(f"UNEVALUATED_{what}_NARROWED")
        elif not a.is_empty and b.is_empty:
            ctx.add(f"UNEVALUATED_{what}_EXTENDED")
        else:
            compare(ctx, a, b)


def open_content(node: Node) -> bool:
    """Any property name may appear with any value: additionalProperties absent or true,
    no patternProperties, unevaluatedProperties absent or true."""
    if not node.permits_additional or node.additional is not None or node.patterns:
        return False
    return node.unevaluated_properties is None or node.unevaluated_properties.is_empty


def partially_open(node: Node, name: str) -> Node | None:
    """The schema a property of that name would be checked against, when one is not listed."""
    for pattern, schema in node.patterns.items():
        if re.search(pattern, name):
            return schema
    if node.additional is not None:
        return node.additional
    uneval = node.unevaluated_properties
    if node.permits_additional and uneval is not None and uneval.kind != "false" and not uneval.is_empty:
        return uneval
    return None


def _array(ctx: Context, o: Node, u: Node) -> None:
    with ctx.enter("items"):
        compare(ctx, o.all_items, u.all_items)
    _item_list(ctx, o, u)
    with ctx.enter("additionalItems"):
        if o.permits_additional != u.permits_additional:
            ctx.add("ADDITIONAL_ITEMS_REMOVED" if o.permits_additional else "ADDITIONAL_ITEMS_ADDED")
        elif o.additional is None and u.additional is not None:
            ctx.add("ADDITIONAL_ITEMS_NARROWED")
        elif u.additional is None and o.additional is not None:
            ctx.add("ADDITIONAL_ITEMS_EXTENDED")
        else:
            compare(ctx, o.additional, u.additional)
    _unevaluated(ctx, o.unevaluated_items, u.unevaluated_items, "unevaluatedItems", "ITEMS")
    _bounds(ctx, o, u, "max_items", "maxItems", "MAX_ITEMS")
    _bounds(ctx, o, u, "min_items", "minItems", "MIN_ITEMS")
    if o.unique != u.unique:
        ctx.add("UNIQUE_ITEMS_REMOVED" if o.unique else "UNIQUE_ITEMS_ADDED", "uniqueItems")
    _bounds(ctx, o, u, "max_contains", "maxContains", "MAX_CONTAINS")
    _bounds(ctx, o, u, "min_contains", "minContains", "MIN_CONTAINS")


def _item_list(ctx: Context, o: Node, u: Node) -> None:
    so, su = o.item_schemas, u.item_schemas
    for index in range(max(len(so), len(su))):
        with ctx.enter(f"items/{index}"):
            if index < len(so) and index < len(su):
                compare(ctx, so[index], su[index])
            elif index < len(so):
                if open_items(u):
                    ctx.add("ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL")
                elif (partial := partial_items(u)) is not None:
                    _covered(ctx, so[index], partial, "ITEM_REMOVED")
                else:
                    ctx.add("ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL" if so[index].kind == "false"
                            else "ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL")
            elif open_items(o):
                ctx.add("ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL" if su[index].is_empty
                        else "ITEM_ADDED_TO_OPEN_CONTENT_MODEL")
            elif (partial := partial_items(o)) is not None:
                _covered(ctx, partial, su[index], "ITEM_ADDED")
            else:
                ctx.add("ITEM_ADDED_TO_CLOSED_CONTENT_MODEL")


def open_items(node: Node) -> bool:
    if not node.permits_additional or node.additional is not None:
        return False
    return node.unevaluated_items is None or node.unevaluated_items.is_empty


def partial_items(node: Node) -> Node | None:
    if node.additional is not None:
        return node.additional
    uneval = node.unevaluated_items
    if node.permits_additional and uneval is not None and uneval.kind != "false" and not uneval.is_empty:
        return uneval
    return None


COMPARERS = {"string": _string, "number": _number, "enum": _enum, "const": _const, "not": _not,
             "combined": _combined, "object": _object, "array": _array}
