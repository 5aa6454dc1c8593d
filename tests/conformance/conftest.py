"""The differential suite (issue 29). Its modules start with ``require_kafka()``: without Java
or Maven each is skipped with the reason, and under CI=true the run fails instead.
The fixtures are tests/support/reference.py's, registered by tests/conftest.py."""
