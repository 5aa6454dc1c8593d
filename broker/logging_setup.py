"""structlog setup shared by the broker and the command-line tools."""

from __future__ import annotations

import logging
import sys

import structlog

_LEVELS = {"DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARNING": logging.WARNING,
           "ERROR": logging.ERROR}


_FORMAT: list[str] = []  # the format configure was given (set_level keeps it)


def set_level(level: str) -> None:
    """The broker's log level, changed at run time (a BROKER_LOGGER alter); nothing where
    ``configure`` never ran (a broker inside a test process logs as that process does)."""
    if _FORMAT:
        configure(level, _FORMAT[-1])


def configure(level: str = "INFO", fmt: str = "console") -> None:
    _FORMAT[:] = [fmt]
    renderer = (structlog.processors.JSONRenderer() if fmt == "json"
                else structlog.dev.ConsoleRenderer(colors=False))
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS[level]),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
