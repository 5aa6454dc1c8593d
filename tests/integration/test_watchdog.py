"""A test that hangs in C with the GIL held (where pytest-timeout's thread cannot run) fails
within its timeout plus the watchdog's margin, with every thread's stack, and the run
still ends with a result: under make test's xdist scheduler the crashed worker's other
tests run on the workers left (issue 37). Run as a suite of its own in a subprocess."""

from __future__ import annotations

import sys
import time

import pytest

from tests.support.broker import ROOT

HUNG = '''
from tests.support.gil import sleep_holding_the_gil

def test_before():
    pass

def test_hangs_in_c_holding_the_gil():
    sleep_holding_the_gil(600)

def test_after_the_hang_in_the_same_module():
    pass
'''
QUICK = '''
def test_one():
    pass

def test_two():
    pass
'''
INI = '''
[pytest]
timeout = 2
timeout_method = thread
kafka_watchdog = timeout
kafka_watchdog_margin = 3
'''


@pytest.fixture
def hung_suite(pytester, monkeypatch):
    pytester.makefile(".ini", pytest=INI)
    pytester.makepyfile(test_hung=HUNG, test_quick=QUICK)
    pytester.makeconftest("from tests.support.scheduling import pytest_xdist_make_scheduler  # noqa: F401\n")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    return pytester


def test_a_test_hung_in_c_fails_with_stacks_and_the_xdist_run_ends(hung_suite):
    started = time.monotonic()
    result = hung_suite.runpytest_subprocess("-n", "2", "--dist", "loadscope", "-p", "xdist", timeout=120)
    took = time.monotonic() - started
    out = result.stdout.str()
    result.assert_outcomes(passed=4, failed=1)
    assert "test_hangs_in_c_holding_the_gil" in out and "crashed" in out
    assert "kipper watchdog" in out and "most recent call first" in out  # the stacks, in the report
    assert "sleep_holding_the_gil" in out
    assert took < 90, out


def test_a_test_hung_in_c_ends_a_single_process_run_with_stacks(hung_suite):
    result = hung_suite.runpytest_subprocess("-n", "0", timeout=120)
    assert result.ret != 0
    err = result.stderr.str()
    assert "Timeout" in err and "most recent call first" in err and "sleep_holding_the_gil" in err


def test_the_watchdog_setting_is_checked(pytester):
    pytester.makefile(".ini", pytest="[pytest]\nkafka_watchdog = soon\n")
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest_subprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "kafka_watchdog must be off, timeout or a number of seconds" in result.stderr.str()


if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip("libc through ctypes")
