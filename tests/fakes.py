"""Fakes for the hardware boundary only: a fake clock (and, below, a fake NVML)."""

from __future__ import annotations


class FakeClock:
    """A monotonic clock the test moves by hand: ``clock.advance(0.1)``."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
