"""Parameters of one direction of an emulated link, validated once, used by every backend."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from typing import Any

from mpsched.validation import InputError

MAX_DELAY_MS = 1000.0
MIN_RATE_MBPS = 0.1
MAX_RATE_MBPS = 1000.0


class ParamError(InputError):
    """A parameter is out of range; `field` names it (dotted path in a scenario)."""


@dataclass(frozen=True)
class GilbertElliott:
    """Two-state bursty loss (Gilbert 1960, Elliott 1963), per packet.

    `p`: P(good -> bad) and `r`: P(bad -> good), evaluated once per packet;
    `loss_good` and `loss_bad` are the loss probabilities in each state
    (netem's `1-k` and `1-h`). Mean loss = (r*loss_good + p*loss_bad) / (p + r).
    """

    p: float
    r: float
    loss_good: float = 0.0
    loss_bad: float = 1.0

    def mean_loss(self) -> float:
        if self.p + self.r == 0:
            return self.loss_good
        return (self.r * self.loss_good + self.p * self.loss_bad) / (self.p + self.r)


@dataclass(frozen=True)
class LinkParams:
    """One direction of a link.

    delay_ms: constant one-way delay added to every packet.
    jitter_ms: standard deviation of a normal variation around delay_ms
        (truncated at 0; packets are never reordered by jitter: a packet
        leaves no earlier than the one before it, like a real link).
    loss: Bernoulli loss probability 0..1 (ignored when `gilbert` is set).
    gilbert: bursty loss model instead of Bernoulli.
    rate_mbps: serialisation rate of Ethernet frames; None = unlimited.
    queue_packets: packets that may wait for the rate limiter (tail drop).
    up: False drops everything (a failed link) and flushes what is queued.
    """

    delay_ms: float = 0.0
    jitter_ms: float = 0.0
    loss: float = 0.0
    gilbert: GilbertElliott | None = None
    rate_mbps: float | None = None
    queue_packets: int = 100
    up: bool = True

    def __post_init__(self) -> None:
        validate(self)

    def with_changes(self, **changes: Any) -> LinkParams:
        return replace(self, **changes)

    def mean_loss(self) -> float:
        return self.gilbert.mean_loss() if self.gilbert else self.loss


def _finite(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ParamError(name, f"must be a finite number, got {value!r}")
    return float(value)


def _prob(name: str, value: Any) -> None:
    if not 0.0 <= _finite(name, value) <= 1.0:
        raise ParamError(name, f"must be a probability 0..1, got {value!r}")


def validate(p: LinkParams) -> None:
    """Raise ParamError naming the first bad field."""
    if not 0.0 <= _finite("delay_ms", p.delay_ms) <= MAX_DELAY_MS:
        raise ParamError("delay_ms", f"must be 0..{MAX_DELAY_MS:g} ms, got {p.delay_ms!r}")
    if not 0.0 <= _finite("jitter_ms", p.jitter_ms) <= MAX_DELAY_MS:
        raise ParamError("jitter_ms", f"must be 0..{MAX_DELAY_MS:g} ms, got {p.jitter_ms!r}")
    _prob("loss", p.loss)
    if p.gilbert is not None:
        if not isinstance(p.gilbert, GilbertElliott):
            raise ParamError("gilbert", "must be a GilbertElliott")
        for f in fields(GilbertElliott):
            _prob(f"gilbert.{f.name}", getattr(p.gilbert, f.name))
    if p.rate_mbps is not None and not (
        MIN_RATE_MBPS <= _finite("rate_mbps", p.rate_mbps) <= MAX_RATE_MBPS
    ):
        raise ParamError(
            "rate_mbps", f"must be {MIN_RATE_MBPS:g}..{MAX_RATE_MBPS:g} Mbit/s, got {p.rate_mbps!r}"
        )
    if type(p.queue_packets) is not int or not (1 <= p.queue_packets <= 100_000):  # no bool
        raise ParamError("queue_packets", f"must be an integer 1..100000, got {p.queue_packets!r}")
    if not isinstance(p.up, bool):
        raise ParamError("up", f"must be true or false, got {p.up!r}")


@dataclass(frozen=True)
class LinkSpec:
    """Both directions of a link: `ab` is from the first endpoint to the second."""

    ab: LinkParams = field(default_factory=LinkParams)
    ba: LinkParams = field(default_factory=LinkParams)
