"""Helpers shared by the policies' unit tests."""

from __future__ import annotations

import random

# every policy the package registers
NAMES = {"ecmp", "rr", "letflow", "minrtt", "wcmp", "llhd", "cmtla", "fdmvqs", "qos", "ca"}
NAMES |= {"llhd-ca", "cmtla-ca", "fdmvqs-ca", "qos-ca", "adaptive"}


class Rigged(random.Random):
    """random() and betavariate() answer from lists (exploration made deterministic)."""

    def __init__(self, uniforms=(), betas=None):
        super().__init__(0)
        self.uniforms = list(uniforms)
        self.betas = dict(betas or {})

    def random(self):
        return self.uniforms.pop(0)

    def randrange(self, n):
        return 0

    def betavariate(self, alpha, beta):
        return self.betas[(alpha, beta)]
