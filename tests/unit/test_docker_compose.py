"""docker-compose.yml: Docker is not available here, so its structure is checked:
services, the commands that name each other's hosts and ports, volumes, files."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.support import requires

yaml = requires.module("yaml", "spark")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))


def words(service: dict) -> list[str]:
    cmd = service["command"]
    text = " ".join(cmd) if isinstance(cmd, list) else cmd
    if text.startswith("sh -c "):
        text = shlex.split(text)[2]
    return shlex.split(text.replace("&&", " && "))


def option(ws: list[str], name: str) -> str:
    return ws[ws.index(name) + 1]


def overrides(ws: list[str]) -> dict[str, str]:
    return dict(ws[i + 1].split("=", 1) for i, w in enumerate(ws) if w == "--override")


def published(service: dict) -> dict[int, int]:
    return {int(c): int(h) for h, c in (str(p).rsplit(":", 1) for p in service.get("ports", []))}


def test_the_broker_master_worker_and_loadgen_services_exist(compose):
    services = compose["services"]
    assert {"broker", "spark-master", "spark-worker", "loadgen"} <= set(services)
    for name, svc in services.items():
        assert svc.get("image") and svc.get("command"), name


def test_depends_on_names_existing_services(compose):
    services = compose["services"]
    for name, svc in services.items():
        deps = svc.get("depends_on", [])
        for dep in (deps if isinstance(deps, list) else deps.keys()):
            assert dep in services and dep != name, (name, dep)
    assert compose["services"]["loadgen"]["depends_on"]["broker"]["condition"] == "service_healthy"
    assert "healthcheck" in services["broker"]


def test_the_broker_listens_where_it_advertises_and_publishes_that_port(compose):
    broker = compose["services"]["broker"]
    ov = overrides(words(broker))
    listen = re.fullmatch(r"PLAINTEXT://0\.0\.0\.0:(\d+)", ov["listeners"])
    adv = re.fullmatch(r"PLAINTEXT://([\w-]+):(\d+)", ov["advertised.listeners"])
    assert listen and adv and adv.group(1) == "broker" and adv.group(2) == listen.group(1)
    assert int(listen.group(1)) in published(broker)
    from kipper.broker.config import load
    load(overrides=ov)  # the overrides are valid broker settings
    assert ov["metrics.dump.dir"] == "/metrics"
    assert any(str(v).startswith("metrics:/metrics") for v in broker["volumes"])


def test_loadgen_targets_the_broker_and_the_master_by_service_name_and_port(compose):
    services = compose["services"]
    ws = words(services["loadgen"])
    host, port = option(ws, "--bootstrap-server").split(":")
    adv = overrides(words(services["broker"]))["advertised.listeners"]
    assert adv == f"PLAINTEXT://{host}:{port}" and host in services
    master_ws = words(services["spark-master"])
    master_url = f"spark://spark-master:{option(master_ws, '--port')}"
    assert option(ws, "--master") == master_url
    assert option(master_ws, "--host") == "spark-master"
    assert int(option(master_ws, "--port")) in published(services["spark-master"])
    assert master_url in words(services["spark-worker"])
    assert option(ws, "--conf") == "spark.driver.host=loadgen"


def test_files_named_in_commands_exist_in_the_repository(compose):
    for name, svc in compose["services"].items():
        mounts = {str(v).split(":")[1]: str(v).split(":")[0] for v in svc.get("volumes", [])}
        for w in words(svc):
            if w.startswith("/app/") and w.endswith((".py", ".yaml")):
                assert mounts.get("/app") == ".", name
                assert (ROOT / w[len("/app/"):]).is_file(), (name, w)
        if svc.get("environment", {}).get("SPARK_CONF_DIR"):
            conf = svc["environment"]["SPARK_CONF_DIR"]
            assert (ROOT / conf[len("/app/"):] / "log4j2.properties").is_file()


def test_spark_services_share_one_image_and_named_volumes_are_declared(compose):
    services = compose["services"]
    images = {services[s]["image"] for s in ("spark-master", "spark-worker", "loadgen", "analyze")}
    assert len(images) == 1 and images.pop().startswith("apache/spark:")
    declared = set(compose.get("volumes") or {})
    for name, svc in services.items():
        for v in svc.get("volumes", []):
            src = str(v).split(":")[0]
            if not src.startswith((".", "/")):
                assert src in declared, (name, src)
