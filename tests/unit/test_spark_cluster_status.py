"""The Spark standalone cluster fixture waits for its own master's JSON status: while a master
starts, its web UI answers paths it has not attached yet (/json/ among them) with the HTML front
page, which CI met; and another master's status is not this one's."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.support.spark_cluster import SparkStandaloneCluster


@pytest.fixture
def web_ui():
    answers: list[bytes] = []

    class Page(BaseHTTPRequestHandler):
        def do_GET(self):
            body = answers.pop(0) if len(answers) > 1 else answers[0]
            self.send_response(200)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    cluster = SparkStandaloneCluster()
    cluster.webui_port = server.server_address[1]
    yield cluster, answers
    server.shutdown()
    cluster.dir.rmdir()


def test_the_front_page_in_place_of_json_is_not_ready_and_the_wait_goes_on(web_ui):
    cluster, answers = web_ui
    mine = {"url": cluster.url, "aliveworkers": 0}
    answers += [b"<!DOCTYPE html><html>", b"<!DOCTYPE html><html>", json.dumps(mine).encode()]
    with pytest.raises(ValueError, match="not JSON"):
        cluster.status()
    cluster._wait(lambda s: True, 10, "the master did not answer")
    assert cluster.status() == mine


def test_another_masters_status_never_counts(web_ui):
    cluster, answers = web_ui
    answers.append(json.dumps({"url": "spark://127.0.0.1:1", "aliveworkers": 2}).encode())
    with pytest.raises(RuntimeError, match=r"within 0.5 s \(last: ValueError: not this master's status"):
        cluster._wait(lambda s: True, 0.5, "the master did not answer")
