"""Command-line tools built on the client library (``kipper <tool>``)."""
