"""Draft a protocol/messages module from Kafka's JSON message schemas.

Usage: python scripts/gen_messages.py SCHEMA_DIR ApiName [module_name]

Prints a module that declares the request and response of one API with
protocol.schema.F, field names in snake_case. The output is a starting point:
modules are reviewed and maintained by hand afterwards (supported range,
docstring). The JSON files themselves are not part of this repository.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

FIXED = {"int8", "int16", "int32", "int64", "uint16", "uint32", "float64", "bool", "uuid"}


def load(path: Path) -> dict:
    text = "\n".join(re.sub(r"^\s*//.*$", "", line) for line in path.read_text().splitlines())
    return json.loads(text)


def snake(name: str) -> str:
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()


def default_literal(field: dict) -> str | None:
    if "default" not in field:
        return None
    d = field["default"]
    t = field["type"]
    if d == "null":
        return "None"
    if t == "bool":
        return "True" if str(d).lower() == "true" else "False"
    if t in FIXED and t != "uuid":
        return str(int(str(d), 0)) if t != "float64" else repr(float(d))
    return repr(d)


def emit_fields(fields: list, common: dict, indent: int) -> list[str]:
    pad = " " * indent
    out = []
    for f in fields:
        t = f["type"]
        sub = f.get("fields")
        elem = t[2:] if t.startswith("[]") else t
        if sub is None and elem in common:
            sub = common[elem]
        if sub is not None:
            kind = "[]" if t.startswith("[]") else "{}"
        else:
            kind = t
        args = [repr(snake(f["name"])), repr(kind)]
        versions = f.get("versions", "0+")
        if versions != "0+":
            args.append(repr(versions))
        kw = []
        if "nullableVersions" in f:
            kw.append(f"nullable={f['nullableVersions']!r}")
        if "tag" in f:
            kw.append(f"tag={f['tag']}")
            kw.append(f"tagged={f['taggedVersions']!r}")
        if "flexibleVersions" in f:
            kw.append(f"flexible={f['flexibleVersions']!r}")
        d = default_literal(f)
        if d is not None:
            kw.append(f"default={d}")
        head = f"{pad}F({', '.join(args + kw)}"
        if sub is not None:
            out.append(head + ", fields=(")
            out.extend(emit_fields(sub, common, indent + 4))
            out.append(f"{pad})),")
        else:
            out.append(head + "),")
    return out


def main() -> None:
    schema_dir = Path(sys.argv[1])
    api = sys.argv[2]
    req = load(schema_dir / f"{api}Request.json")
    resp = load(schema_dir / f"{api}Response.json")
    const = snake(api).upper()
    lines = [
        f'"""{api} (API key {req["apiKey"]})."""',
        "",
        "from kipper.protocol.schema import Api, F",
        "",
        f"{const} = Api(",
        f"    key={req['apiKey']}, name={api!r}, valid={req['validVersions']!r}, "
        f"flexible={req['flexibleVersions']!r},",
        "    request=(",
    ]
    common = {c["name"]: c["fields"] for c in req.get("commonStructs", [])}
    lines += emit_fields(req["fields"], common, 8)
    lines.append("    ),")
    lines.append("    response=(")
    common = {c["name"]: c["fields"] for c in resp.get("commonStructs", [])}
    lines += emit_fields(resp["fields"], common, 8)
    lines.append("    ),")
    lines.append(")")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
