"""Errors shared by the controller's pure modules and its REST layer."""

from __future__ import annotations


class FieldError(ValueError):
    """Invalid input; `field` names the offending field (dotted path, e.g. ``targets.max_loss``)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class NotFoundError(LookupError):
    """No such path, class or connection (REST: 404)."""


class UnavailableError(RuntimeError):
    """A switch did not acknowledge a change (REST: 503)."""


class NotPrimaryError(RuntimeError):
    """This controller is a backup: another one is primary on a switch, and writes go there."""
