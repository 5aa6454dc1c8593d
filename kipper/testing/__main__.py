"""``python -m kipper.testing zygote PATH`` (the zygote, kipper/testing/zygote.py) or
``python -m kipper.testing child PORT`` (one broker, where there is no fork)."""

import sys

from kipper.testing import zygote

if __name__ == "__main__":
    role, arg = sys.argv[1], sys.argv[2]
    raise SystemExit(zygote.main(arg) if role == "zygote" else zygote.spawned(int(arg)))
