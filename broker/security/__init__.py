"""Authentication: SASL (PLAIN, SCRAM-SHA-256/512) and TLS for listeners.

Everything here is sans-I/O except ``config_store`` (files) and ``tls``
(building an ``ssl.SSLContext``): the SASL mechanisms are state machines fed
client tokens, the credential store is a dict with a file behind it, and the
handlers in ``broker/handlers/sasl.py`` only move bytes between the two.
"""
