"""Lists the packages for pyproject.toml's package-dir mapping.

Each source root (broker/, client/, protocol/, spark_jobs/) installs as a
subpackage of ``kipper``; ``find_packages`` walks each root so that a new
subpackage needs no edit here.
"""

from setuptools import find_packages, setup

ROOTS = ("broker", "client", "protocol", "spark_jobs")

packages = ["kipper", *(f"kipper.{p}" for p in find_packages(where="kipper"))]
for root in ROOTS:
    packages += [f"kipper.{p}" for p in find_packages(include=[root, f"{root}.*"])]

setup(packages=packages)
