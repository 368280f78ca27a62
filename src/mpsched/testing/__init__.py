"""What the tests, the benchmarks and the demos drive the system with: a headless browser, link
beds and UDP probes, seeded malformed frames and input files, tagged-frame captures, the REST
abuse table and a fake REST backend (docs/architecture.md lists each module)."""
