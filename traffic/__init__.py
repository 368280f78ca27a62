"""Workload generators and receivers."""
