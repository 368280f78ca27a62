"""Traffic sources and sinks that run inside the testbed's hosts.

`python -m mpsched.traffic.gen <role> …` (the runner starts these in the
hosts' namespaces; every role writes one JSON report to `--out` when it ends,
also on SIGTERM/SIGINT). Times in reports are wall-clock seconds (the
namespaces share one clock).

Roles:
  sink    TCP/MPTCP (and optional UDP) receiver: per-connection bytes over time
          (and per peer address with `--peers`).
  bulk    long-lived streams for `--seconds`.
  files   transfers of given sizes (cycled, shuffled), Poisson arrivals: FCT.
  poisson open-loop Poisson arrivals at a given offered load, sizes drawn from
          a published data-centre CDF (`flowsizes.py`: web search, data
          mining): FCT per flow.
  plan    open-loop flows of a given schedule, each to its own destination
          (`--flows FILE`: a fabric's host sends to hosts behind other edges,
          src/mpsched/lab/fabric_workload.py): FCT per flow.
  flows   closed-loop many-flow load: `--flows` connections each sending
          `--size-kb`, again and again.
  cbr     constant-bit-rate UDP.
  vbr     Pareto on/off source with the papers' packet-size mix, a share over
          TCP (TCP_NODELAY, one write per packet) and the rest over UDP.

Open loop (files, poisson): every flow starts in a thread of its own at its
arrival time, and its FCT counts from that arrival to the sink's reply. An
explicit `--concurrency N` (files) / `--max-concurrent N` (poisson) bounds
the flows in progress: a flow arriving while N are running waits for a slot,
and the wait is part of its FCT (`wait_s` says how long); 0, the default, is
no bound.

Flows connect from source ports drawn from a generator seeded with `--seed`,
so a run's 5-tuples (and so the path a hash gives each flow) repeat with the seed.

Wire protocol (TCP): the client sends an 8-byte big-endian length (0 = until
EOF), then the data; for a length > 0 the sink answers one byte after the
last one, which ends the client's flow completion time.

Modules: `base` (the stop signal, sockets, reports), `sink`, `sender` (connect, bulk,
closed-loop flows), `openloop` (files, poisson, plan), `udp` (cbr, vbr), `cli` (the
argument parser, the role table and `main`, run by `__main__`).
"""
