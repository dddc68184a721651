"""``python -m sinews.bench GROUP [--json PATH]``: dispatch to a benchmark group."""

import importlib
import sys

GROUPS = ("core", "constrained", "contact", "lcp", "scale", "batch", "coldstart", "loops", "simulate")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in GROUPS:
        print("usage: python -m sinews.bench {%s} [--json PATH] [options]" % ",".join(GROUPS))
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    module = importlib.import_module(f"sinews.bench.{argv[0]}")
    return module.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
