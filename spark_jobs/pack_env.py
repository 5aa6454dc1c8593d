"""Packs the Python environment that a Spark cluster's executors run the load
tasks in: a virtualenv holding kipper and confluent-kafka (the transactional
producers of seed 003), packed with venv-pack. This is the way Spark's "Python
Package Management" guide ships dependencies: the archive goes with
``--archives``, Spark unpacks it next to each executor, and PYSPARK_PYTHON
points into it, so the workers need Java and a Python of the same version at
the same path, and nothing else (docs/SPARK.md, "On a cluster").

    python -m kipper.spark_jobs.pack_env --output kipper-env.tar.gz
    PYSPARK_PYTHON=./environment/bin/python spark-submit --master spark://HOST:7077 \\
        --archives kipper-env.tar.gz#environment spark_jobs/loadgen.py ...

kipper comes from this checkout when it is one (so the executors run the
driver's code), else from the package index at the installed version.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXECUTOR_EXTRAS = ("confluent-kafka",)  # from kipper's interop extra, at the version it names


def kipper_source() -> str:
    if (ROOT / "pyproject.toml").is_file() and (ROOT / "spark_jobs").is_dir():
        return str(ROOT)
    return f"kipper=={metadata.version('kipper')}"


def extra_requirements() -> list[str]:
    """confluent-kafka as kipper's own metadata pins it (the interop extra)."""
    out = []
    for req in metadata.requires("kipper") or []:
        name = re.split(r"[<>=!~; \[]", req, maxsplit=1)[0]
        if name.lower() in EXECUTOR_EXTRAS:
            out.append(req.split(";")[0].strip())
    return out or list(EXECUTOR_EXTRAS)


def pack(output: Path, python: str) -> Path:
    try:
        import venv_pack
    except ImportError:
        raise SystemExit("pack_env: venv-pack is missing: pip install venv-pack (it comes with kipper's "
                         "spark extra)") from None
    with tempfile.TemporaryDirectory(prefix="kipper-env-") as tmp:
        env = Path(tmp) / "env"
        subprocess.run([python, "-m", "venv", str(env)], check=True)
        subprocess.run([str(env / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        kipper_source(), *extra_requirements()], check=True)
        output.parent.mkdir(parents=True, exist_ok=True)
        venv_pack.pack(prefix=str(env), output=str(output), force=True, verbose=False)
    return output


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="pack_env", description="Pack kipper's executor environment for Spark.")
    p.add_argument("--output", default="kipper-env.tar.gz", metavar="FILE.tar.gz")
    p.add_argument("--python", default=getattr(sys, "_base_executable", sys.executable),
                   help="the interpreter the environment is built on; every worker needs it at the same path "
                        "(default: the one under this virtualenv, %(default)s)")
    args = p.parse_args(argv)
    out = pack(Path(args.output), args.python)
    print(f"pack_env: {out} ({out.stat().st_size / 1e6:.1f} MB) on {args.python}")
    print(f"pack_env: spark-submit --archives {out}#environment with PYSPARK_PYTHON=./environment/bin/python")
    return 0


if __name__ == "__main__":
    sys.exit(main())
