"""Benchmarks of the project's building blocks (`make bench-links`: the link emulator)."""
