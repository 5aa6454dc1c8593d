"""Help that shows each option's default, for every ``kipper`` tool. Imports
nothing of the client, so ``kipper broker`` starts without it (a timed start)."""

from __future__ import annotations

import argparse


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions as written; every option with a meaningful default shows it."""

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        if ("%(default)" in text or default in (None, False, [], argparse.SUPPRESS)
                or not action.option_strings):
            return text
        return f"{text} (default: %(default)s)"


def add_command(sub, name: str, help: str, description: str | None = None) -> argparse.ArgumentParser:
    return sub.add_parser(name, help=help, description=description or help[:1].upper() + help[1:] + ".",
                          formatter_class=HelpFormatter)
