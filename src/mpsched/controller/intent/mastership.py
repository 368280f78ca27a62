"""Mastership: is this controller primary on its switches, and what happens when it becomes
primary.

P4Runtime arbitration elects one primary client per switch, the highest election id
(docs/design.md, "A primary and a backup controller"). An agent that finds another controller
primary holds its stream as a backup; this controller is then a backup and refuses the operator's
writes (`require_primary`, REST 409 naming the primary). When the primary goes, the agent
is promoted and, before it programs its switch, `on_promoted` takes over the intent the old
primary kept in the shared state file.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from mpsched.controller.intent.intent import IntentKeeper
from mpsched.controller.intent.state import Intent, StateError
from mpsched.controller.model.errors import NotPrimaryError
from mpsched.controller.southbound.agent import SwitchAgent

log = logging.getLogger(__name__)


class Mastership:
    def __init__(
        self,
        agents: Sequence[SwitchAgent],
        keeper: IntentKeeper,
        apply: Callable[[Intent], None],
        peer: str | None = None,
    ) -> None:
        """`apply` makes an intent the intended state (under the controller's lock); `peer`
        is the other controller's REST URL, named when refusing writes."""
        self.agents = agents
        self.keeper = keeper
        self.apply = apply
        self.peer = peer

    def role(self) -> str:
        """"backup" while another controller is primary on any switch, else "primary"."""
        return "backup" if any(a.status.state == "backup" for a in self.agents) else "primary"

    def require_primary(self) -> None:
        """NotPrimaryError (naming each switch's primary, and the peer) while a backup."""
        backups = [a for a in self.agents if a.status.state == "backup"]
        if backups:
            where = "; ".join(f"{a.sw.name}: {a.status.error}" for a in backups)
            peer = f" at {self.peer}" if self.peer else ""
            raise NotPrimaryError(
                f"this controller is a backup ({where}): send writes to the primary{peer}"
            )

    def on_promoted(self, switch: str) -> None:
        """The agent of `switch` just became primary (the other controller is gone). The
        operator's intent is taken over from the shared state file, which the old primary
        kept up to date; the agent's next programming reads the switch back and writes the
        difference. Called in the agent's thread, before it programs the switch."""
        log.warning("%s: taking over as primary", switch)
        store = self.keeper.store
        if store is None:
            return
        try:
            intent = store.load()
            if intent is not None:
                self.apply(intent)
        except StateError as error:
            log.error(
                "%s: the intent in %s cannot be taken over (%s); this controller's is kept",
                switch,
                store.path,
                error,
            )
