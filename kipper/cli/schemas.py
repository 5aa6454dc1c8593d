"""``kipper schemas``: the broker's Schema Registry from the command line (its REST API,
as any of Confluent's clients call it; docs/SCHEMA_REGISTRY.md).

    kipper schemas register --subject orders-value --file order.avsc [--type AVRO] [--reference NAME=SUBJECT:VERSION]
    kipper schemas list [--subject S] [--deleted]            # subjects, or a subject's versions
    kipper schemas get --subject S [--version N|latest]      # or --id N
    kipper schemas check --subject S --file new.avsc [--version N|latest|all]
    kipper schemas config [--subject S] [--set LEVEL]        # compatibility, global or per subject
    kipper schemas delete --subject S [--version N] [--permanent]

``--url`` is the registry (default http://127.0.0.1:8081, make run's); ``--user NAME:PASSWORD``
authenticates (HTTP Basic, the broker's SCRAM users); ``--ca-file`` verifies an https one.
A refusal prints the registry's message and error code and exits 1.
"""

from __future__ import annotations

import base64
import json
import ssl
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from kipper.cli.common import ToolError, UsageError, add_command

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
DEFAULT_URL = "http://127.0.0.1:8081"


def add_parser(sub) -> None:
    p = add_command(sub, "schemas", "the broker's Schema Registry", __doc__.split("\n\n")[0])
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True

    def action(name: str, help_text: str):
        a = add_command(actions, name, help_text, help_text)
        a.add_argument("--url", default=DEFAULT_URL, help="the Schema Registry's URL")
        a.add_argument("--user", metavar="NAME:PASSWORD", help="HTTP Basic credentials (a broker SCRAM user)")
        a.add_argument("--ca-file", metavar="PEM", help="CA certificates to verify an https:// registry")
        a.set_defaults(func=run)
        return a

    a = action("register", "register a schema under a subject; prints its id and version")
    a.add_argument("--subject", required=True)
    a.add_argument("--file", required=True, help="the schema (.avsc, .json or .proto); - reads stdin")
    a.add_argument("--type", choices=("AVRO", "JSON", "PROTOBUF"), help="default: from the file's suffix")
    a.add_argument("--reference", action="append", default=[], metavar="NAME=SUBJECT:VERSION")
    a.add_argument("--normalize", action="store_true")
    a = action("list", "the subjects, or a subject's versions")
    a.add_argument("--subject")
    a.add_argument("--deleted", action="store_true", help="soft-deleted ones too")
    a = action("get", "a schema, by subject and version or by id")
    a.add_argument("--subject")
    a.add_argument("--version", default="latest")
    a.add_argument("--id", type=int)
    a = action("check", "is a schema compatible with a subject's versions?")
    a.add_argument("--subject", required=True)
    a.add_argument("--file", required=True)
    a.add_argument("--type", choices=("AVRO", "JSON", "PROTOBUF"))
    a.add_argument("--reference", action="append", default=[], metavar="NAME=SUBJECT:VERSION")
    a.add_argument("--version", default="latest", help="a version, latest, or all (every live version)")
    a = action("config", "the compatibility level, global or of a subject; --set changes it")
    a.add_argument("--subject")
    a.add_argument("--set", metavar="LEVEL", help="NONE, BACKWARD, FORWARD, FULL or their _TRANSITIVE forms")
    a = action("delete", "delete a subject or one of its versions (soft, unless --permanent)")
    a.add_argument("--subject", required=True)
    a.add_argument("--version")
    a.add_argument("--permanent", action="store_true")


def run(args) -> int:
    client = Client(args.url, args.user, args.ca_file)
    out = ACTIONS[args.action](client, args)
    print(out if isinstance(out, str) else json.dumps(out, indent=2))
    return 0


class Client:
    def __init__(self, url: str, user: str | None, ca_file: str | None):
        self.url = url.rstrip("/")
        self.headers = {"Accept": CONTENT_TYPE, "Content-Type": CONTENT_TYPE}
        if user:
            if ":" not in user:
                raise UsageError("--user is NAME:PASSWORD")
            self.headers["Authorization"] = "Basic " + base64.b64encode(user.encode()).decode()
        self.context = ssl.create_default_context(cafile=ca_file) if ca_file else None

    def call(self, method: str, path: str, body=None, **query):
        query = {k: v for k, v in query.items() if v not in (None, False)}
        url = self.url + path + ("?" + urllib.parse.urlencode(query) if query else "")
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method=method, headers=self.headers)
        try:
            with urllib.request.urlopen(request, timeout=30, context=self.context) as answer:
                return json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as exc:
            try:
                error = json.loads(exc.read())
                raise ToolError(f"{error.get('message')} (error code {error.get('error_code')})") from None
            except (ValueError, AttributeError):
                raise ToolError(f"HTTP {exc.code} from {url}") from None
        except urllib.error.URLError as exc:
            raise ToolError(f"cannot reach the Schema Registry at {self.url}: {exc.reason}") from None


def _subject(name: str) -> str:
    return urllib.parse.quote(name, safe="")


def _schema_body(args) -> dict:
    path = args.file
    try:
        text = Path("/dev/stdin" if path == "-" else path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--file: {exc.strerror}: {path}") from None
    schema_type = args.type or {".proto": "PROTOBUF", ".json": "JSON"}.get(Path(path).suffix, "AVRO")
    body = {"schema": text, "schemaType": schema_type}
    refs = []
    for item in args.reference:
        name, sep, rest = item.partition("=")
        subject, colon, version = rest.rpartition(":")
        if not sep or not colon or not version.isdigit():
            raise UsageError(f"--reference '{item}' is not NAME=SUBJECT:VERSION")
        refs.append({"name": name, "subject": subject, "version": int(version)})
    if refs:
        body["references"] = refs
    return body


def _register(c: Client, args):
    answer = c.call("POST", f"/subjects/{_subject(args.subject)}/versions", _schema_body(args),
                    normalize="true" if args.normalize else None)
    return f"id {answer['id']}, version {answer.get('version')} of {args.subject}"


def _list(c: Client, args):
    deleted = "true" if args.deleted else None
    if args.subject:
        return c.call("GET", f"/subjects/{_subject(args.subject)}/versions", deleted=deleted)
    return c.call("GET", "/subjects", deleted=deleted)


def _get(c: Client, args):
    if args.id is not None:
        return c.call("GET", f"/schemas/ids/{args.id}")
    if not args.subject:
        raise UsageError("get needs --subject (with --version) or --id")
    return c.call("GET", f"/subjects/{_subject(args.subject)}/versions/{args.version}")


def _check(c: Client, args):
    where = "" if args.version == "all" else f"/{args.version}"
    answer = c.call("POST", f"/compatibility/subjects/{_subject(args.subject)}/versions{where}", _schema_body(args),
                    verbose="true")
    if answer.get("is_compatible"):
        return f"compatible with {args.subject} ({args.version})"
    raise ToolError(f"not compatible with {args.subject} ({args.version}): " + "; ".join(answer.get("messages") or ()))


def _config(c: Client, args):
    path = f"/config/{_subject(args.subject)}" if args.subject else "/config"
    if args.set:
        return c.call("PUT", path, {"compatibility": args.set.upper()})
    return c.call("GET", path, defaultToGlobal="true" if args.subject else None)


def _delete(c: Client, args):
    path = f"/subjects/{_subject(args.subject)}" + (f"/versions/{args.version}" if args.version else "")
    return c.call("DELETE", path, permanent="true" if args.permanent else None)


ACTIONS = {"register": _register, "list": _list, "get": _get, "check": _check, "config": _config,
           "delete": _delete}
