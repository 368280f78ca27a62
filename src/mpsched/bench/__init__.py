"""The benchmarks: `mpsched bench NAME` (cli.py lists them) and `make bench-NAME`."""
