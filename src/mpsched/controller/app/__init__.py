"""The application's wiring: the controller that holds every part (`core`) and serves the
REST API's views and writes (`backend`), the os-ken application and its REST server (`app`),
the command line (`cli`, `security`), the run files (`runfiles`) and the fabric's REST
answers (`fabric_ops`). The only layer that imports the northbound (docs/architecture.md,
"Layers")."""
