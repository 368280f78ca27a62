"""In-network multipath scheduler.

The shared library of the controller, the topologies and the traffic tools.
"""

__version__ = "0.1.0"
