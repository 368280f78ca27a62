"""The controller: P4Runtime southbound, path state, REST, os-ken application."""
