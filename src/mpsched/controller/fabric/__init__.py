"""The network's paths as the controller installs them: units and their routes (`routes`),
link failures found from path liveness (`failures`) over the hops paths share
(`tomography`)."""
