"""``python -m kipper.broker``: the same as ``kipper broker``."""

from kipper.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["broker", *__import__("sys").argv[1:]]))
