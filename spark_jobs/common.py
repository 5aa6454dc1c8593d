"""What both Spark jobs share: a quiet, laptop-safe SparkSession, one-line
errors with a non-zero exit. (The latency histogram is protocol/histogram.py.)

The master is the job's --master, else spark-submit's (--master or
spark.master in spark-defaults.conf), else local[*]. The session disables the
UI, binds the driver to loopback for local masters, turns task retries off (a
retried load task would count its records twice) and loads
``log4j2.properties`` from this directory: at JVM start when the job was
started with plain ``python``, and right after the context exists under
``spark-submit`` (pass SPARK_CONF_DIR=spark_jobs to quiet its first lines too).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
LOG4J = HERE / "log4j2.properties"


class JobError(Exception):
    """A failure the user can fix: printed as one line, exit status ``code``."""

    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code


def main_wrapper(name: str, main) -> None:
    """Run ``main()`` and turn JobError (and Spark task failures) into one line on stderr."""
    try:
        code = main()
    except JobError as exc:
        print(f"{name}: error: {exc}", file=sys.stderr, flush=True)
        code = exc.code
    except KeyboardInterrupt:
        code = 130
    except (ConnectionError, OSError) as exc:  # the broker went away mid-run, a full disk
        print(f"{name}: error: {exc}", file=sys.stderr, flush=True)
        code = 1
    except Exception as exc:  # a Spark job failure arrives as a Py4J error with a Java trace
        from kipper.protocol.errors import KafkaError

        if isinstance(exc, KafkaError):
            print(f"{name}: error: {exc}", file=sys.stderr, flush=True)
            sys.exit(1)
        if type(exc).__name__ not in ("Py4JJavaError", "PySparkException") and \
                not type(exc).__module__.startswith(("py4j", "pyspark")):
            raise
        line = spark_error_line(exc)
        if "No module named 'kipper" in line:
            line += (" (the executors' Python has no kipper: ship a packed environment with "
                     "--archives, docs/SPARK.md 'On a cluster')")
        print(f"{name}: error: Spark job failed: {line}", file=sys.stderr, flush=True)
        code = 1
    sys.stdout.flush()
    sys.exit(code or 0)


def spark_error_line(exc: BaseException) -> str:
    """The most telling line of a Spark failure: the Python error raised in a task, if any."""
    text = str(exc)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if (line.split(":", 1)[0].endswith(("Error", "Exception", "JobError"))
                and not line.startswith(("at ", "org.apache", "py4j", "java."))):
            return line
    return lines[0] if lines else type(exc).__name__


def is_local(master: str) -> bool:
    return master == "local" or master.startswith("local[")


def resolve_master(flag: str | None, submitted: str | None) -> str:
    """The job's own --master wins, then spark-submit's (its --master, or
    spark.master in spark-defaults.conf), then local[*]."""
    return flag or submitted or "local[*]"


def submitted_conf():
    """Spark's configuration as spark-submit handed it over (its --master,
    --conf, --archives and spark-defaults.conf), or, outside spark-submit, as a
    JVM started now with this directory's log4j2.properties sees it.

    A SparkConf made before the JVM gateway exists is a plain Python dict that
    sees none of spark-submit's settings, so the gateway comes first."""
    from pyspark import SparkConf, SparkContext

    launch = SparkConf()  # used only if this call starts the JVM itself (plain `python job.py`)
    launch.set("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={LOG4J.as_uri()}")
    SparkContext._ensure_initialized(conf=launch)
    return SparkConf()  # backed by the JVM now: its system properties are spark-submit's settings


def spark_session(app_name: str, master: str | None, extra: dict | None = None):
    """A SparkSession configured for kipper's jobs (see the module comment)."""
    from pyspark.sql import SparkSession

    conf = submitted_conf()
    master = resolve_master(master, conf.get("spark.master", None))
    conf.setMaster(master)
    conf.setAppName(app_name)
    defaults = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.task.maxFailures": "1",
        "spark.stage.maxConsecutiveAttempts": "1",
        "spark.speculation": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.log.level": "WARN",
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={LOG4J.as_uri()}",
    }
    if is_local(master):
        # the executors are this machine's: the same interpreter, the checkout, the log settings
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        defaults.update({"spark.driver.bindAddress": "127.0.0.1", "spark.driver.host": "127.0.0.1",
                         "spark.executor.extraJavaOptions": f"-Dlog4j2.configurationFile={LOG4J.as_uri()}",
                         "spark.executorEnv.PYTHONPATH": str(HERE.parent)})
    # On a cluster the executors' Python is Spark's to choose: PYSPARK_PYTHON or
    # spark.pyspark.python, usually the packed environment of --archives (docs/SPARK.md).
    for key, value in {**defaults, **(extra or {})}.items():
        if key in ("spark.task.maxFailures", "spark.ui.enabled", "spark.ui.showConsoleProgress") \
                or not conf.contains(key):
            conf.set(key, value)
    spark = SparkSession.builder.config(conf=conf).getOrCreate()
    _load_log4j(spark)
    return spark


def _load_log4j(spark) -> None:
    """Under spark-submit the JVM started with Spark's own logging profile: switch to ours."""
    try:
        jvm = spark.sparkContext._jvm
        jvm.org.apache.logging.log4j.core.config.Configurator.reconfigure(jvm.java.net.URI(LOG4J.as_uri()))
    except Exception:  # a different logging backend: keep spark.log.level=WARN
        pass
