"""The P4Runtime side: the P4Info by name (`p4info`), a blocking P4Runtime client for one
device (`client`) and the P4 program's control-plane interface bound to its P4Info
(`pipeline`: table, action, counter and digest names, entry builders)."""
