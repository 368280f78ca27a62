"""Errors shared by the controller's pure modules and its REST layer."""

from __future__ import annotations

from mpsched.validation import InputError


class FieldError(InputError):
    """Invalid input; `field` names the offending field (dotted path, e.g. ``targets.max_loss``,
    list items in brackets, e.g. ``classes[2].match.dscp``). The one invalid-input error of
    mpsched.validation, raised by the controller's hand-written validators."""
