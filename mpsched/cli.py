"""`mpsched`: one command for the project's tools."""

from __future__ import annotations

import sys

USAGE = """usage: mpsched <command> [options]

commands:
  controller   run the controller (os-ken app, P4Runtime, REST)   -- mpsched controller --help
  topo         bring the two-path BMv2 testbed up and wait          -- mpsched topo --help
  demo         walking-skeleton demo with weights 1:0 then 1:1     -- mpsched demo --help
  run          run a scenario N times with fixed seeds              -- mpsched run --help
  compare      run scenarios under every policy, one table           -- mpsched compare --help
  ctl          drive a running controller over REST (classes, ...)  -- mpsched ctl --help
  cleanup      remove processes and links left by killed runs
"""


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    command, rest = args[0], args[1:]
    if command == "controller":
        from mpsched.controller.__main__ import main as run
    elif command == "topo":
        from mpsched.topo.__main__ import main as run
    elif command == "demo":
        from mpsched.demo import main as run
    elif command == "run":
        from mpsched.lab.experiment import main as run
    elif command == "compare":
        from mpsched.lab.experiment import main_compare as run
    elif command == "ctl":
        from mpsched.client.ctl import main as run
    elif command == "cleanup":
        from mpsched.proc.cleanup import main as run
    else:
        print(f"mpsched: unknown command {command!r}\n\n{USAGE}", file=sys.stderr)
        return 2
    return run(rest)


if __name__ == "__main__":
    sys.exit(main())
