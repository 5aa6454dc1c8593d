"""Confluent's REST API, one small function per route: read the path and query, check the
ACL (``access.py``), ask the engine or commit its change, shape the answer. They run on the
event loop; ``ROUTES`` is the table the server matches paths against."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import unquote

from kipper.broker.registry_http import access
from kipper.broker.schema_registry import errors, views
from kipper.broker.schema_registry.model import SCHEMA_TYPES

MAX_LIMIT = 1_000_000


@dataclass(frozen=True)
class Path:
    """The path's parameters, decoded (a subject may hold an escaped '/')."""

    subject: str | None = None
    version: str | None = None
    id: str | None = None
    guid: str | None = None


@dataclass
class Request:
    method: str
    path: Path
    query: dict[str, list[str]]
    body: object = None
    session: object = None  # broker.context.Session when authorization applies

    def values(self, name: str) -> list[str]:
        return list(self.query.get(name, ()))

    def flag(self, name: str) -> bool:
        return (self.query.get(name) or ["false"])[-1].strip().lower() == "true"

    def text(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else default

    def number(self, name: str, default: int) -> int:
        try:
            return int(self.text(name, str(default)))
        except ValueError:
            raise errors.unprocessable(f"query parameter {name} is not a number") from None


@dataclass
class Context:
    """What a route reaches: the registry service and the authorizer of the moment."""

    service: object  # broker.schema_registry.service.RegistryService
    authorizer: access.Authorizer | None
    cluster_id: str
    version: str = "kipper"
    extra: dict = field(default_factory=dict)

    @property
    def engine(self):
        return self.service.engine

    def allow_subject(self, req: Request, action: str, subject: str) -> None:
        if self.authorizer is not None and self.authorizer.enabled and req.session is not None \
                and not self.authorizer.subject(req.session, action, subject):
            raise errors.RegistryError(403, 40301, f"User {req.session.principal} is denied operation "
                                                   f"{action} on subject {subject}")

    def allow_cluster(self, req: Request, action: str) -> None:
        if self.authorizer is not None and self.authorizer.enabled and req.session is not None \
                and not self.authorizer.cluster(req.session, action):
            raise errors.RegistryError(403, 40301, f"User {req.session.principal} is denied operation "
                                                   f"{action} on the global settings")

    def may_read(self, req: Request, subject: str) -> bool:
        try:
            self.allow_subject(req, access.READ, subject)
            return True
        except errors.RegistryError:
            return False


def _page(req: Request, items: list) -> list:
    offset = max(req.number("offset", 0), 0)
    limit = req.number("limit", -1)
    if limit <= 0 or limit > MAX_LIMIT:
        limit = MAX_LIMIT
    return items[offset:offset + limit]


def _id(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise errors.RegistryError(404, 404, "HTTP 404 Not Found") from None


# --- /, /schemas ---------------------------------------------------------------------------------

def root(ctx: Context, req: Request):
    return {}


def schema_types(ctx: Context, req: Request):
    return ["JSON", "PROTOBUF", "AVRO"] if set(SCHEMA_TYPES) == {"AVRO", "JSON", "PROTOBUF"} else list(SCHEMA_TYPES)


def list_schemas(ctx: Context, req: Request):
    values = ctx.engine.schemas(prefix=req.text("subjectPrefix", "") or "", deleted=req.flag("deleted"),
                                latest_only=req.flag("latestOnly"))
    return _page(req, [views.schema_entity(v) for v in values if ctx.may_read(req, v.subject)])


def schema_by_id(ctx: Context, req: Request):
    subject = req.text("subject")
    value = ctx.engine.by_id(_id(req.path.id), subject)
    out = views.schema_string(value, ctx.engine.formatted(value, req.text("format")), with_subject=subject is not None)
    if req.flag("fetchMaxId"):
        out["maxId"] = ctx.engine.state.max_id
    return out


def schema_text_by_id(ctx: Context, req: Request):
    value = ctx.engine.by_id(_id(req.path.id), req.text("subject"))
    return Raw(ctx.engine.formatted(value, req.text("format")))


def subjects_of_id(ctx: Context, req: Request):
    values = ctx.engine.id_versions(_id(req.path.id), subject=req.text("subject"), deleted=req.flag("deleted"))
    return _page(req, list(dict.fromkeys(v.subject for v in values if ctx.may_read(req, v.subject))))


def versions_of_id(ctx: Context, req: Request):
    values = ctx.engine.id_versions(_id(req.path.id), subject=req.text("subject"), deleted=req.flag("deleted"))
    return _page(req, [{"subject": v.subject, "version": v.version} for v in values if ctx.may_read(req, v.subject)])


def schema_by_guid(ctx: Context, req: Request):
    value = ctx.engine.by_guid(req.path.guid)
    return views.schema_string(value, ctx.engine.formatted(value, req.text("format")))


def ids_of_guid(ctx: Context, req: Request):
    value = ctx.engine.by_guid(req.path.guid)
    return [{"context": ".", "id": value.id}]


# --- /subjects -------------------------------------------------------------------------------------

def list_subjects(ctx: Context, req: Request):
    subjects = ctx.engine.subjects(prefix=req.text("subjectPrefix", "") or "", deleted=req.flag("deleted"),
                                   deleted_only=req.flag("deletedOnly"))
    return _page(req, [s for s in subjects if ctx.may_read(req, s)])


def lookup(ctx: Context, req: Request):
    subject = req.path.subject
    ctx.allow_subject(req, access.READ, subject)
    value = ctx.engine.lookup(subject, req.body, normalize=req.flag("normalize"), deleted=req.flag("deleted"))
    return views.schema_entity(value, ctx.engine.formatted(value, req.text("format")), deleted=True)


def delete_subject(ctx: Context, req: Request):
    subject = req.path.subject
    permanent = req.flag("permanent")
    ctx.allow_subject(req, access.DELETE if permanent else access.WRITE, subject)
    return ctx.service.commit(ctx.engine.delete_subject(subject, permanent=permanent))


def list_versions(ctx: Context, req: Request):
    subject = req.path.subject
    ctx.allow_subject(req, access.READ, subject)
    return _page(req, ctx.engine.versions(subject, deleted=req.flag("deleted"), deleted_only=req.flag("deletedOnly"),
                                          deleted_as_negative=req.flag("deletedAsNegative")))


def register(ctx: Context, req: Request):
    subject = req.path.subject
    ctx.allow_subject(req, access.WRITE, subject)
    answer = ctx.service.commit(ctx.engine.register(subject, req.body, normalize=req.flag("normalize"),
                                                    now=ctx.service.clock()))
    fmt = req.text("format")
    if fmt:
        value = ctx.engine.by_id(answer["id"], subject)
        answer = dict(answer, schema=ctx.engine.formatted(value, fmt))
    return answer


def get_version(ctx: Context, req: Request):
    subject = req.path.subject
    ctx.allow_subject(req, access.READ, subject)
    value = ctx.engine.version(subject, req.path.version, deleted=req.flag("deleted"))
    return views.schema_entity(value, ctx.engine.formatted(value, req.text("format")), deleted=True)


def get_version_schema(ctx: Context, req: Request):
    subject = req.path.subject
    ctx.allow_subject(req, access.READ, subject)
    value = ctx.engine.version(subject, req.path.version, deleted=req.flag("deleted"))
    return Raw(ctx.engine.formatted(value, req.text("format")))


def referenced_by(ctx: Context, req: Request):
    subject = req.path.subject
    ctx.allow_subject(req, access.READ, subject)
    return _page(req, ctx.engine.referenced_by(subject, req.path.version, deleted=req.flag("deleted")))


def delete_version(ctx: Context, req: Request):
    subject = req.path.subject
    permanent = req.flag("permanent")
    ctx.allow_subject(req, access.DELETE if permanent else access.WRITE, subject)
    return ctx.service.commit(ctx.engine.delete_version(subject, req.path.version, permanent=permanent))


def latest_with_metadata(ctx: Context, req: Request):
    subject = req.path.subject
    ctx.allow_subject(req, access.READ, subject)
    wanted = dict(zip(req.values("key"), req.values("value")))
    for value in reversed(ctx.engine.state.subject_versions(subject, deleted=req.flag("deleted"))):
        properties = (value.metadata or {}).get("properties") or {}
        if all(properties.get(k) == v for k, v in wanted.items()):
            return views.schema_entity(value, ctx.engine.formatted(value, req.text("format")))
    if not ctx.engine.state.has_subject(subject, deleted=req.flag("deleted")):
        raise errors.subject_not_found(subject)
    raise errors.schema_not_found()


# --- /compatibility ----------------------------------------------------------------------------------

def compatibility(ctx: Context, req: Request):
    subject = req.path.subject
    ctx.allow_subject(req, access.READ, subject)
    return ctx.engine.compatibility(subject, req.path.version, req.body,
                                    normalize=req.flag("normalize"), verbose=req.flag("verbose"))


# --- /config and /mode -------------------------------------------------------------------------------

def _subject_param(req: Request) -> str | None:
    subject = req.path.subject
    return None if subject in (None, ":.:") else subject


def get_config(ctx: Context, req: Request):
    subject = _subject_param(req)
    if subject is not None:
        ctx.allow_subject(req, access.READ, subject)
    return ctx.engine.get_config(subject, default_to_global=req.flag("defaultToGlobal"))


def put_config(ctx: Context, req: Request):
    subject = _subject_param(req)
    ctx.allow_subject(req, access.CONFIGURE, subject) if subject is not None else ctx.allow_cluster(req, access.CONFIGURE)
    return ctx.service.commit(ctx.engine.set_config(subject, req.body))


def delete_config(ctx: Context, req: Request):
    subject = _subject_param(req)
    ctx.allow_subject(req, access.CONFIGURE, subject) if subject is not None else ctx.allow_cluster(req, access.CONFIGURE)
    return ctx.service.commit(ctx.engine.delete_config(subject))


def get_mode(ctx: Context, req: Request):
    subject = _subject_param(req)
    if subject is not None:
        ctx.allow_subject(req, access.READ, subject)
    return ctx.engine.get_mode(subject, default_to_global=req.flag("defaultToGlobal"))


def put_mode(ctx: Context, req: Request):
    subject = _subject_param(req)
    ctx.allow_subject(req, access.CONFIGURE, subject) if subject is not None else ctx.allow_cluster(req, access.CONFIGURE)
    return ctx.service.commit(ctx.engine.set_mode(subject, req.body, force=req.flag("force")))


def delete_mode(ctx: Context, req: Request):
    subject = _subject_param(req)
    ctx.allow_subject(req, access.CONFIGURE, subject) if subject is not None else ctx.allow_cluster(req, access.CONFIGURE)
    return ctx.service.commit(ctx.engine.delete_mode(subject))


# --- the server's own --------------------------------------------------------------------------------

def contexts(ctx: Context, req: Request):
    return ["."]


def cluster_metadata(ctx: Context, req: Request):
    return {"scope": {"path": [], "clusters": {"kafka-cluster": ctx.cluster_id,
                                               "schema-registry-cluster": "schema-registry"}}}


def server_version(ctx: Context, req: Request):
    return {"version": ctx.version, "commitId": ""}


class Raw(str):
    """An answer written as it is, not as a JSON string (Confluent's .../schema routes)."""


ROUTES = [(method, tuple(template.strip("/").split("/")) if template.strip("/") else (), handler)
          for method, template, handler in (
    ("GET", "/", root),
    ("GET", "/schemas/types", schema_types),
    ("GET", "/schemas", list_schemas),
    ("GET", "/schemas/ids/{id}", schema_by_id),
    ("GET", "/schemas/ids/{id}/schema", schema_text_by_id),
    ("GET", "/schemas/ids/{id}/subjects", subjects_of_id),
    ("GET", "/schemas/ids/{id}/versions", versions_of_id),
    ("GET", "/schemas/guids/{guid}", schema_by_guid),
    ("GET", "/schemas/guids/{guid}/ids", ids_of_guid),
    ("GET", "/subjects", list_subjects),
    ("POST", "/subjects/{subject}", lookup),
    ("DELETE", "/subjects/{subject}", delete_subject),
    ("GET", "/subjects/{subject}/versions", list_versions),
    ("POST", "/subjects/{subject}/versions", register),
    ("GET", "/subjects/{subject}/versions/{version}", get_version),
    ("DELETE", "/subjects/{subject}/versions/{version}", delete_version),
    ("GET", "/subjects/{subject}/versions/{version}/schema", get_version_schema),
    ("GET", "/subjects/{subject}/versions/{version}/referencedby", referenced_by),
    ("GET", "/subjects/{subject}/metadata", latest_with_metadata),
    ("POST", "/compatibility/subjects/{subject}/versions/{version}", compatibility),
    ("POST", "/compatibility/subjects/{subject}/versions", compatibility),
    ("GET", "/config", get_config), ("PUT", "/config", put_config), ("DELETE", "/config", delete_config),
    ("GET", "/config/{subject}", get_config), ("PUT", "/config/{subject}", put_config),
    ("DELETE", "/config/{subject}", delete_config),
    ("GET", "/mode", get_mode), ("PUT", "/mode", put_mode), ("DELETE", "/mode", delete_mode),
    ("GET", "/mode/{subject}", get_mode), ("PUT", "/mode/{subject}", put_mode),
    ("DELETE", "/mode/{subject}", delete_mode),
    ("GET", "/contexts", contexts),
    ("GET", "/v1/metadata/id", cluster_metadata),
    ("GET", "/v1/metadata/version", server_version),
)]


def _fill(template: tuple[str, ...], segments: list[str]) -> dict[str, str] | None:
    """The path parameters when ``segments`` fit the template, else None."""
    if len(template) != len(segments):
        return None
    found = {}
    for part, segment in zip(template, segments):
        if part.startswith("{"):
            if not segment:
                return None
            found[part[1:-1]] = segment
        elif part != segment:
            return None
    return found


def _path(groups: dict[str, str]) -> Path:
    decoded = {k: unquote(v) for k, v in groups.items()}
    return Path(subject=decoded.get("subject"), version=decoded.get("version"), id=decoded.get("id"),
                guid=decoded.get("guid"))


def match(method: str, path: str):
    """(handler, path parameters); raises 404 or 405 as Confluent's server answers them."""
    trimmed = path.strip("/")
    segments = trimmed.split("/") if trimmed else []
    known_path = False
    for route_method, template, handler in ROUTES:
        found = _fill(template, segments)
        if found is not None:
            known_path = True
            if route_method == method:
                return handler, _path(found)
    if known_path:
        raise errors.RegistryError(405, 405, "HTTP 405 Method Not Allowed")
    raise errors.RegistryError(404, 404, "HTTP 404 Not Found")
