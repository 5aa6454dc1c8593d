"""Test support: real broker processes, a fault-injecting TCP proxy."""
