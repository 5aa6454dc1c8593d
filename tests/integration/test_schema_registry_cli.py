"""``kipper schemas`` against a broker's registry: register, list, get, check, config, delete,
and a refusal printed as the registry's message with exit code 1."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kipper.cli import main
from kipper.testing import EmbeddedBroker
from tests.support import requires
from tests.support.broker import ROOT

requires.module("avro", "schema-registry")
V1 = {"type": "record", "name": "Order", "namespace": "shop", "fields": [{"name": "id", "type": "long"}]}


@pytest.fixture(scope="module")
def url():
    with EmbeddedBroker({"schema.registry.listeners": "http://127.0.0.1:0"}) as broker:
        yield broker.schema_registry_url


def schemas(url: str, *args, capsys=None) -> subprocess.CompletedProcess:
    """``kipper schemas ...`` in this process (capsys) or, without it, as a command."""
    argv = ["schemas", args[0], "--url", url, *args[1:]]
    if capsys is None:
        return subprocess.run([sys.executable, "-m", "kipper", *argv], cwd=ROOT, capture_output=True, text=True,
                              timeout=60)
    code = main(argv)
    out = capsys.readouterr()
    return subprocess.CompletedProcess(argv, code, out.out, out.err)


def test_register_list_get_check_config_delete(url, tmp_path, capsys):
    def run(*args):
        return schemas(url, *args, capsys=capsys)

    v1, v2, bad = tmp_path / "v1.avsc", tmp_path / "v2.avsc", tmp_path / "bad.avsc"
    v1.write_text(json.dumps(V1))
    v2.write_text(json.dumps({**V1, "fields": V1["fields"] + [{"name": "note", "type": "string", "default": ""}]}))
    bad.write_text(json.dumps({**V1, "fields": V1["fields"] + [{"name": "qty", "type": "int"}]}))

    done = run("register", "--subject", "orders-value", "--file", str(v1))
    assert done.returncode == 0 and done.stdout.strip() == "id 1, version 1 of orders-value", done.stderr
    assert json.loads(run("list").stdout) == ["orders-value"]
    got = json.loads(run("get", "--subject", "orders-value").stdout)
    assert (got["id"], got["version"], json.loads(got["schema"])) == (1, 1, V1)
    assert json.loads(run("get", "--id", "1").stdout)["schema"] == got["schema"]

    assert run("check", "--subject", "orders-value", "--file", str(v2)).returncode == 0
    refused = run("check", "--subject", "orders-value", "--file", str(bad))
    assert refused.returncode == 1 and "not compatible with orders-value" in refused.stderr
    failed = run("register", "--subject", "orders-value", "--file", str(bad))
    assert failed.returncode == 1 and "(error code 409)" in failed.stderr and "Traceback" not in failed.stderr

    assert json.loads(run("config", "--subject", "orders-value", "--set", "none").stdout) == \
        {"compatibility": "NONE"}
    assert json.loads(run("config", "--subject", "orders-value").stdout)["compatibilityLevel"] == "NONE"
    assert run("register", "--subject", "orders-value", "--file", str(bad)).returncode == 0
    assert json.loads(run("list", "--subject", "orders-value").stdout) == [1, 2]
    assert json.loads(run("delete", "--subject", "orders-value", "--version", "1").stdout) == 1
    assert json.loads(run("list", "--subject", "orders-value", "--deleted").stdout) == [1, 2]


def test_an_unreachable_registry_is_one_line_and_exit_1():
    done = schemas("http://127.0.0.1:9", "list")
    assert done.returncode == 1 and "cannot reach the Schema Registry" in done.stderr
    assert "Traceback" not in done.stderr
