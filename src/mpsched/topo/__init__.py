"""Mininet topologies whose switches are BMv2 simple_switch_grpc processes."""
