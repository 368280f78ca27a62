"""The operator's side of the REST API: a client (`rest`) and `mpsched ctl` (`ctl`)."""
