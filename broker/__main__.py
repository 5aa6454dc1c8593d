"""``python -m kipper.broker``: the same as ``kipper broker`` (broker/main.py)."""

from kipper.broker.main import main

if __name__ == "__main__":
    raise SystemExit(main())
