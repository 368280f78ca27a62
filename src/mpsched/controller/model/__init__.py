"""The value types the controller's layers pass each other (reports, path states, decisions,
placements, the loop's statistics) and its errors. The bottom layer: imports nothing of the
controller (docs/architecture.md, "Layers")."""
