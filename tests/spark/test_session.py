"""Which master a job runs on: the job's --master, else spark-submit's (its
--master or spark.master in spark-defaults.conf), else local[*]. Each case is
a real spark-submit (or plain python) of a script that reads the configuration
the way the jobs do, without starting a SparkContext."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from kipper.spark_jobs.common import resolve_master
from tests.spark.conftest import spark_submit
from tests.support.broker import ROOT

pytestmark = pytest.mark.slow

SCRIPT = """\
from kipper.spark_jobs.common import resolve_master, submitted_conf
submitted = submitted_conf().get("spark.master", None)
print("MASTERS", submitted, resolve_master(None, submitted), resolve_master("local[3]", submitted))
"""


def masters(proc) -> list[str]:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (line,) = [x for x in proc.stdout.splitlines() if x.startswith("MASTERS ")]
    return line.split()[1:]


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "which_master.py"
    path.write_text(SCRIPT)
    return path


def test_the_job_flag_wins_then_spark_submit_then_local_star():
    assert resolve_master("local[3]", "spark://h:7077") == "local[3]"
    assert resolve_master(None, "spark://h:7077") == "spark://h:7077"
    assert resolve_master(None, None) == "local[*]"


def test_spark_submit_master_is_seen_and_the_job_flag_overrides_it(script):
    proc = spark_submit(str(script), submit_args=("--master", "local[1]"), timeout=120)
    assert masters(proc) == ["local[1]", "local[1]", "local[3]"]


def test_spark_master_from_spark_defaults_is_honoured(script, tmp_path):
    conf = tmp_path / "conf"
    conf.mkdir()
    shutil.copy(ROOT / "spark_jobs" / "log4j2.properties", conf)
    (conf / "spark-defaults.conf").write_text("spark.master  local[1]\n")
    proc = spark_submit(str(script), env={"SPARK_CONF_DIR": str(conf)}, quiet_conf=False, timeout=120)
    assert masters(proc) == ["local[1]", "local[1]", "local[3]"]


def test_without_spark_submit_or_defaults_the_master_is_local_star(script):
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_CONF_DIR", "PYSPARK_SUBMIT_ARGS", "MASTER")}
    env["SPARK_CONF_DIR"] = str(ROOT / "spark_jobs")  # its spark-defaults.conf sets no master
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert masters(proc)[1:] == ["local[*]", "local[3]"]  # pyspark's own launcher says local[*] too
