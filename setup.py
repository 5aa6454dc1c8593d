"""Lists the packages for pyproject.toml's package-dir mapping, and builds the record parser.

Each source root (broker/, client/, protocol/, spark_jobs/) installs as a
subpackage of ``kipper``; ``find_packages`` walks each root so that a new
subpackage needs no edit here.

``kipper.protocol._record_scan`` is the compiled form of protocol/record_scan.py
(the check of every record the broker ingests). It is optional: without a C
compiler the install still succeeds and the pure-Python form is used (slower; the
tests fail under CI=true when the compiled form is missing). The digest of the C
source is compiled in, so a build older than its source is detected.
"""

import hashlib
from pathlib import Path

from setuptools import Extension, find_packages, setup

ROOTS = ("broker", "client", "protocol", "spark_jobs")
RECORD_SCAN_SOURCE = "protocol/_record_scan.c"

packages = ["kipper", *(f"kipper.{p}" for p in find_packages(where="kipper"))]
for root in ROOTS:
    packages += [f"kipper.{p}" for p in find_packages(include=[root, f"{root}.*"])]

digest = hashlib.sha256((Path(__file__).parent / RECORD_SCAN_SOURCE).read_bytes()).hexdigest()[:16]
record_scan = Extension(
    "kipper.protocol._record_scan", [RECORD_SCAN_SOURCE],
    define_macros=[("KIPPER_SOURCE_DIGEST", f'"{digest}"')],
    optional=True,
)

setup(packages=packages, ext_modules=[record_scan])
