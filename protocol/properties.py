"""Java-style ``.properties`` files: the format of Kafka's broker and client configs.

Shared by the broker (``--config``) and the tools (``--command-config``):
key=value or key: value, ``#`` and ``!`` comments, backslash line continuations.
"""

from __future__ import annotations

from pathlib import Path


class PropertiesError(ValueError):
    """The file cannot be read or a line is not key=value; the message names the line."""


def read_properties(path: str | Path) -> dict[str, str]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise PropertiesError(f"cannot read config file {path}: {exc.strerror}") from None
    props: dict[str, str] = {}
    pending = ""
    # the extra empty line ends a continuation left open on the last line
    for lineno, raw in enumerate([*text.splitlines(), ""], 1):
        line = pending + raw.strip()
        pending = ""
        if not line or line[0] in "#!":
            continue
        if line.endswith("\\"):
            pending = line[:-1]
            continue
        sep = min((i for i in (line.find("="), line.find(":")) if i > 0), default=-1)
        if sep < 0:
            raise PropertiesError(f"{path}:{lineno}: expected key=value, got '{line}'")
        props[line[:sep].strip()] = line[sep + 1:].strip()
    return props
