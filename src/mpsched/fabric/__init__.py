"""Fabrics: many edge switches joined by multi-hop paths (docs/fabric.md).

`model` (the normalised `Fabric`: switches, links, the limits), `files` (a scenario's
`fabric:` section: the leaf-spine generator and the explicit graph), `paths` (the paths of
every ordered pair of edges and their numbering across failures), `ports` (port numbering
and the per-switch next-hop table), `__main__` (`mpsched fabric FILE`). Pure logic: the data
plane, the controller and the lab do not use it yet.
"""
