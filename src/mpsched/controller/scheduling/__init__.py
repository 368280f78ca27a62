"""Scheduling: the control loop's decisions without I/O (`scheduler`), traffic classes
(`classes`), weights to hash buckets (`weights`) and the MPTCP-aware mode (`mptcp`); the
policies themselves are in `mpsched.controller.policies`."""
