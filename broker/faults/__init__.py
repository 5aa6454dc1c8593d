"""Faults a test asks the broker for (kipper.testing): error answers, delays, lost answers
and closed connections for chosen requests, and a count of every request seen. Only a test
broker has a plan; ``kipper broker`` dispatches without one."""
