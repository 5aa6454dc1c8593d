"""Spark's Kafka connector (spark-sql-kafka-0-10) for the jobs: resolved once, then offline.

The connector's version is the installed pyspark's (pyproject pins a pyspark whose
connector Maven Central serves). ``resolve`` runs Spark's own resolver once
(``spark-submit --packages`` with ``spark.jars.ivy`` in kipper's cache,
``${KIPPER_CACHE:-~/.cache/kipper}/spark/``) and writes ``jars.txt``: the jars the
connector needs that pyspark does not already ship. ``add_to(spark)`` puts them on a
running session with ``ADD JAR`` (the driver's SQL class loader and every executor),
which works under ``spark-submit`` as well as ``python job.py``: after the first
resolution nothing is fetched again. ``python -m kipper.spark_jobs.connector`` (or
``scripts/spark-connector``) resolves and prints where the jars are.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ARTIFACT = "spark-sql-kafka-0-10_2.13"
GROUP = "org.apache.spark"
RESOLVE_TIMEOUT_S = 600


class ConnectorError(Exception):
    """The connector is not in the cache and cannot be resolved here."""


def spark_version() -> str:
    import pyspark

    return pyspark.__version__


def coordinate(version: str | None = None) -> str:
    return f"{GROUP}:{ARTIFACT}:{version or spark_version()}"


def cache_root() -> Path:
    return Path(os.environ.get("KIPPER_CACHE") or Path.home() / ".cache" / "kipper").expanduser()


def cache_dir(version: str | None = None) -> Path:
    return cache_root() / "spark" / f"{ARTIFACT}-{version or spark_version()}"


def _pyspark_jars() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent / "jars"


def _artifact_name(jar: str) -> str:
    """``org.apache.kafka_kafka-clients-3.9.2.jar`` -> ``kafka-clients`` (Ivy's retrieve
    pattern is organisation_artifact-revision); ``kafka-clients-3.9.2.jar`` the same."""
    stem = jar[:-4].split("_", 1)[1] if "_" in jar.split("-", 1)[0] else jar[:-4]
    parts = stem.split("-")
    while len(parts) > 1 and parts[-1][:1].isdigit():
        parts.pop()
    return "-".join(parts)


def cached_jars(version: str | None = None) -> list[str] | None:
    """The jars of a completed resolution, or None."""
    listing = cache_dir(version) / "jars.txt"
    if not listing.is_file():
        return None
    jars = [line.strip() for line in listing.read_text().splitlines() if line.strip()]
    return jars if jars and all(Path(j).is_file() for j in jars) else None


def _spark_submit() -> str:
    here = Path(sys.executable).parent / "spark-submit"
    return str(here) if here.exists() else (shutil.which("spark-submit") or "spark-submit")


def resolve(version: str | None = None, repositories: str | None = None, out=sys.stderr) -> list[str]:
    """The connector's jars, resolved with ``spark-submit --packages`` the first time."""
    jars = cached_jars(version)
    if jars is not None:
        return jars
    target = cache_dir(version)
    target.mkdir(parents=True, exist_ok=True)
    with open(target / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two jobs starting at once resolve it once
        jars = cached_jars(version)
        return jars if jars is not None else _resolve(target, version, repositories, out)


def _resolve(target: Path, version: str | None, repositories: str | None, out) -> list[str]:
    ivy = target / "ivy"
    print(f"resolving {coordinate(version)} into {target} (once; later runs need no network)",
          file=out, flush=True)
    with tempfile.TemporaryDirectory(prefix="kipper-connector-") as tmp:
        noop = Path(tmp) / "noop.py"
        noop.write_text("")  # the packages are resolved before the application starts
        cmd = [_spark_submit(), "--packages", coordinate(version), "--conf", f"spark.jars.ivy={ivy}",
               "--conf", "spark.ui.enabled=false"]
        if repositories:
            cmd += ["--repositories", repositories]
        env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
                   PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
        env.pop("SPARK_CONF_DIR", None)
        try:
            proc = subprocess.run(cmd + [str(noop)], cwd=tmp, env=env, capture_output=True, text=True,
                                  timeout=RESOLVE_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ConnectorError(f"cannot run spark-submit to resolve {coordinate(version)}: {exc}") from None
    retrieved = sorted((ivy / "jars").glob("*.jar")) if (ivy / "jars").is_dir() else []
    if proc.returncode != 0 or not any(ARTIFACT in j.name for j in retrieved):
        lines = [x for x in (proc.stdout + proc.stderr).splitlines()
                 if "unresolved dependency" in x or "not found" in x.lower() or "Exception" in x]
        raise ConnectorError(f"cannot resolve {coordinate(version)} from Maven Central "
                             f"(spark-submit exit {proc.returncode}): {(lines or ['no detail'])[0].strip()}; "
                             "see docs/SPARK.md 'Spark's Kafka connector' for offline use")
    shipped = {_artifact_name(j.name) for j in _pyspark_jars().glob("*.jar")}
    keep = [str(j) for j in retrieved if _artifact_name(j.name) not in shipped]
    tmp_listing = target / "jars.txt.tmp"
    tmp_listing.write_text("\n".join(keep) + "\n")
    tmp_listing.replace(target / "jars.txt")  # complete or absent
    return keep


def add_to(spark, jars: list[str] | None = None) -> list[str]:
    """ADD JAR for each connector jar on a running session; returns them."""
    jars = jars if jars is not None else resolve()
    loaded = spark.sparkContext._jsc.sc().listJars().mkString("\n").split("\n")
    for jar in jars:
        if not any(j.endswith("/" + Path(jar).name) for j in loaded):
            spark.sql(f"ADD JAR '{jar}'")
    return jars


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="spark-connector",
                                description=f"Resolve Spark's Kafka connector ({ARTIFACT}) into kipper's cache.")
    p.add_argument("--repositories", metavar="URL[,URL]", help="Maven repositories to try besides Maven Central "
                                                                "(an internal mirror)")
    p.add_argument("--check", action="store_true", help="only say whether the cache holds it (no network)")
    p.add_argument("--jars", action="store_true", help="print the jars comma-separated (for spark-submit --jars)")
    args = p.parse_args(argv)
    if args.check:
        jars = cached_jars()
        if jars is None:
            print(f"spark-connector: {coordinate()} is not in {cache_dir()}", file=sys.stderr)
            return 1
    else:
        try:
            jars = resolve(repositories=args.repositories)
        except ConnectorError as exc:
            print(f"spark-connector: error: {exc}", file=sys.stderr)
            return 1
    print(",".join(jars) if args.jars else f"{coordinate()}: {len(jars)} jar(s) in {cache_dir()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
