"""``kipper users add|delete|list --config-dir DIR``: SCRAM users, edited offline.

Writes config.dir/users.json the way the broker does (atomically, under the
store lock). A running broker with the same config.dir picks the change up
within about a second. Passwords are never stored: each user gets a salted
SCRAM-SHA-256 and SCRAM-SHA-512 credential (PLAIN logins are checked against
them). The password comes from --password, --password-file or a prompt.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path

from kipper.broker.security.credentials import CredentialStore, valid_username
from kipper.cli.common import HelpFormatter, UsageError
from kipper.protocol.sasl import MAX_ITERATIONS, MECHANISM_CODES, MIN_ITERATIONS


def add_parser(sub) -> None:
    p = sub.add_parser("users", help="add, delete or list SASL/SCRAM users in a broker's config dir",
                       description=__doc__, formatter_class=HelpFormatter)
    p.add_argument("action", choices=("add", "delete", "list"), help="what to do")
    p.add_argument("--config-dir", required=True, help="the broker's config.dir")
    p.add_argument("--user", help="user name (add, delete)")
    p.add_argument("--password", help="password (add); else --password-file or a prompt")
    p.add_argument("--password-file", help="read the password from the first line of this file")
    p.add_argument("--mechanism", action="append", choices=tuple(MECHANISM_CODES),
                   help="SCRAM mechanism(s) to store, repeatable (default: both)")
    p.add_argument("--iterations", type=int, default=4096,
                   help=f"PBKDF2 iterations, {MIN_ITERATIONS}..{MAX_ITERATIONS}")
    p.set_defaults(func=run)


def _password(args) -> str:
    if args.password is not None:
        return args.password
    if args.password_file:
        return Path(args.password_file).read_text(encoding="utf-8").splitlines()[0]
    if not sys.stdin.isatty():
        return sys.stdin.readline().rstrip("\n")
    first = getpass.getpass(f"Password for {args.user}: ")
    if getpass.getpass("Again: ") != first:
        raise UsageError("the passwords differ")
    return first


def run(args: argparse.Namespace) -> int:
    store = CredentialStore(args.config_dir)
    if args.action == "list":
        for user, mechs in store.describe().items():
            print(f"{user}\t" + ",".join(f"{m}(iterations={i})" for m, i in sorted(mechs.items())))
        return 0
    if not args.user or not valid_username(args.user):
        raise UsageError(f"users {args.action} needs a valid --user")
    if args.action == "delete":
        if not store.delete_user(args.user):
            print(f"User {args.user} does not exist.", file=sys.stderr)
            return 1
        print(f"Deleted user {args.user}.")
        return 0
    if not MIN_ITERATIONS <= args.iterations <= MAX_ITERATIONS:
        raise UsageError(f"--iterations must be between {MIN_ITERATIONS} and {MAX_ITERATIONS}")
    password = _password(args)
    if not password:
        raise UsageError("the password is empty")
    store.add_user(args.user, password, tuple(args.mechanism or MECHANISM_CODES), args.iterations)
    print(f"Added user {args.user} ({', '.join(args.mechanism or MECHANISM_CODES)}).")
    return 0
