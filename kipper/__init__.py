"""The ``kipper`` command: one entry point, one subcommand per tool."""
