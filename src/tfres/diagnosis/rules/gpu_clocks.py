"""GPU clocks held back for heat or by the hardware, from NVML's clock event reasons."""

from __future__ import annotations

from collections.abc import Iterator

from tfres.diagnosis.facts import RunFacts
from tfres.diagnosis.rules.base import Finding, pct, span_text
from tfres.diagnosis.rules.gpu import gpu_series

__all__ = ["gpu_throttled", "THROTTLE_MIN_SHARE"]

#: Power or thermal throttling in >= 10% of the GPU samples is more than a passing spike.
THROTTLE_MIN_SHARE = 0.10

#: the reasons that mean clocks were held back. ``sw_power_cap`` alone is not among them: a
#: GPU running flat out sits at its power limit and NVML reports it in nearly every sample
_THROTTLE_ALARMS = (
    "hw_slowdown",
    "sw_thermal_slowdown",
    "hw_thermal_slowdown",
    "hw_power_brake_slowdown",
)


def gpu_throttled(facts: RunFacts) -> Iterator[Finding]:
    """Thermal or hardware slowdowns in >= 10% of a GPU's samples (NVML); ``sw_power_cap``
    alone, a GPU working at its power limit, is not one."""
    for index, gs in gpu_series(facts).items():
        hits = [g for g in gs if any(r in _THROTTLE_ALARMS for r in g.throttle_reasons)]
        if not gs or len(hits) / len(gs) < THROTTLE_MIN_SHARE:
            continue
        reasons = sorted({r for g in hits for r in g.throttle_reasons if r in _THROTTLE_ALARMS})
        clocks = [g.sm_clock_mhz for g in gs if g.sm_clock_mhz]
        temps = [g.temperature_celsius for g in gs if g.temperature_celsius is not None]
        power = [g.power_watts for g in gs if g.power_watts is not None]
        parts = [f"{', '.join(reasons)} in {pct(len(hits) / len(gs))} of GPU {index}'s samples"]
        if clocks:
            parts.append(f"SM clock {min(clocks)}-{max(clocks)} MHz")
        if temps:
            parts.append(f"up to {max(temps):.0f} C")
        if power:
            parts.append(f"up to {max(power):.0f} W")
        thermal = any("thermal" in r.lower() for r in reasons)
        yield Finding(
            rule="gpu_throttled",
            severity="warning",
            title=f"GPU {index} throttled for {'temperature' if thermal else 'power'}",
            evidence="; ".join(parts) + f", {span_text(facts.window)}",
            cause=(
                "the GPU lowered its clocks because it ran hot (cooling, airflow, dust)"
                if thermal
                else "the GPU's hardware slowed its clocks (a power brake or slowdown signal)"
            ),
            fix=(
                "nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER  # check cooling and the power "
                "limit (nvidia-smi -pl needs admin rights)"
            ),
            span=facts.window,
            impact=len(hits) / len(gs),
        )
