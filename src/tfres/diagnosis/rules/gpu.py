"""GPU rules: a GPU the run could not use, a GPU left idle, underused or busy copying, the
allocator near the GPU's memory, and other processes on the GPU (clocks:
:mod:`.gpu_clocks`).

GPU readings come from NVML (``Sample.gpus``, the same figures as ``nvidia-smi``); what
TensorFlow sees comes from the fingerprint's ``tensorflow.physical_devices``. TensorFlow's
``GPU:i`` is not NVML's GPU i: the sampler records the map (``extra["tf_gpu_nvml_index"]``).

By default TensorFlow reserves nearly all of a GPU's memory when it starts, so NVML's
"used" says nothing about what the model needs. TensorFlow's allocator does
(``Sample.tf_memory``: read in-process by ``tfres.monitor`` and the ResourceMonitor callback,
from inside the command by ``tfres run``'s start-up hook): the near-full and underused rules
judge its peak, never NVML's used memory. Without it (``--no-instrument``) a reserved GPU is
judged on utilization alone, and its fullness only with memory growth on, where the run's
NVML memory is the allocator's pool at its largest.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tfres.diagnosis.facts import RunFacts, mean
from tfres.diagnosis.rules.advice import COPY_FIX, IDLE_TEXT, UNDERUSED_FIX
from tfres.diagnosis.rules.base import Finding, pct, seconds, size, span_text

__all__ = [
    "gpu_not_used",
    "gpu_idle",
    "gpu_underused",
    "gpu_copy_bound",
    "gpu_memory_peak",
    "gpu_series",
    "GPU_IDLE_UTIL_PERCENT",
    "GPU_UNDERUSED_UTIL_PERCENT",
    "GPU_SPARE_MEMORY_SHARE",
    "TRANSFER_BOUND_RATIO",
    "COPY_BOUND_RATIO",
    "GPU_MEMORY_NEAR_FULL",
    "GPU_OTHERS_MEMORY_SHARE",
    "GPU_RESERVED_SHARE",
]

#: Mean utilization below 5%: the GPU did nothing of note (nvidia-smi shows 0-3% at idle).
GPU_IDLE_UTIL_PERCENT = 5.0
#: Below 50% mean utilization the GPU spends most of the run waiting on the host.
GPU_UNDERUSED_UTIL_PERCENT = 50.0
#: Utilization at least twice the compute engine's activity (NVML GPM): the rest is copies.
COPY_BOUND_RATIO = 2.0
#: Less than half the GPU memory used: room for a larger batch.
GPU_SPARE_MEMORY_SHARE = 0.50
#: Host-to-device copy taking >= half the compute time: the transfer, not the math, is the cost.
TRANSFER_BOUND_RATIO = 0.5
#: TensorFlow's allocator peak (or NVML's used memory) >= 90% of the GPU's: the next larger
#: batch or a fragment will raise ResourceExhaustedError.
GPU_MEMORY_NEAR_FULL = 0.90
#: Other processes holding >= 25% of a GPU's memory shrink what the run can use.
GPU_OTHERS_MEMORY_SHARE = 0.25
#: TensorFlow's default reservation: the run holds >= 85% of a GPU's memory (TF takes all
#: but a few hundred MiB) without memory growth
GPU_RESERVED_SHARE = 0.85


def _tf_device_of(facts: RunFacts, index: int) -> str | None:
    """TensorFlow's name (``GPU:0``) of the GPU with NVML index ``index``, where known."""
    mapping = facts.record.extra.get("tf_gpu_nvml_index")
    if isinstance(mapping, dict) and mapping:
        return next((dev for dev, i in mapping.items() if i == index), None)
    gpus = [g for g in facts.fingerprint.get("gpus") or [] if isinstance(g, dict)]
    return "GPU:0" if len(gpus) <= 1 and index == 0 else None  # one GPU: no doubt


def _growth_on(facts: RunFacts) -> bool:
    return str(facts.env.get("TF_FORCE_GPU_ALLOW_GROWTH", "")).strip().lower() == "true"


def _own_memory(gs: list[Any]) -> list[int]:
    return [g.process_memory_used_bytes for g in gs if g.process_memory_used_bytes is not None]


def _reserved(facts: RunFacts, gs: list[Any], total: int | None) -> bool:
    """Whether the GPU's used memory is TensorFlow's default reservation, not its use.

    From the run's own memory where NVML names it; where NVML cannot (the processes in a
    container's PID namespace, Windows WDDM, MIG) from the GPU's used memory: without
    memory growth TensorFlow takes nearly all the free memory at start, so a GPU that
    TensorFlow used and that is >= 85% full says nothing about what the model needs.
    """
    if _growth_on(facts) or not total:
        return False
    own = [b for b in _own_memory(gs) if b]  # 0: before the runtime took any
    if own or all(g.process_memory_used_bytes is not None for g in gs):
        return bool(own) and max(own) >= GPU_RESERVED_SHARE * total
    used = [g.memory_used_bytes for g in gs if g.memory_used_bytes is not None]
    tf_sees_gpus = facts.section("tensorflow").get("installed") and _tf_gpus(facts) != []
    return bool(used and tf_sees_gpus) and max(used) >= GPU_RESERVED_SHARE * total


def _tf_gpus(facts: RunFacts) -> list[dict[str, Any]] | None:
    tf = facts.section("tensorflow")
    if not tf.get("installed"):
        return None
    devices = tf.get("physical_devices")
    if not isinstance(devices, list):
        return None
    return [d for d in devices if isinstance(d, dict) and d.get("device_type") == "GPU"]


def gpu_series(facts: RunFacts) -> dict[int, list[Any]]:
    """Each GPU's readings in the rules' window, by NVML index."""
    series: dict[int, list[Any]] = {}
    for s in facts.active:
        for g in s.gpus:
            series.setdefault(g.index, []).append(g)
    return series


def gpu_not_used(facts: RunFacts) -> Iterator[Finding]:
    """NVML sees a GPU but TensorFlow lists none: critical, with the likely reason."""
    hw = [g for g in facts.fingerprint.get("gpus") or [] if isinstance(g, dict)]
    tf_gpus = _tf_gpus(facts)
    if not hw or tf_gpus is None or tf_gpus:
        return
    tf = facts.section("tensorflow")
    env = facts.env
    visible = env.get("CUDA_VISIBLE_DEVICES")
    build = tf.get("build_info") or {}
    if visible is not None and str(visible).strip() in ("", "-1"):
        cause = f"CUDA_VISIBLE_DEVICES={visible!r} hides every GPU from TensorFlow"
        fix = (
            "unset CUDA_VISIBLE_DEVICES (or set it to the GPUs to use: export "
            "CUDA_VISIBLE_DEVICES=0)"
        )
    elif build.get("is_cuda_build") is False:
        cause = f"this TensorFlow ({tf.get('version')}) is a CPU-only build"
        fix = "pip uninstall -y tensorflow-cpu && pip install 'tensorflow[and-cuda]'"
    else:
        cause = "TensorFlow could not load the CUDA libraries or the driver is too old for them"
        fix = "tfres doctor  # names the missing library or the driver/CUDA mismatch"
    names = ", ".join(f"GPU {g.get('index')}: {g.get('name')}" for g in hw)
    yield Finding(
        rule="gpu_not_used",
        severity="critical",
        title="A GPU is present but TensorFlow cannot see it",
        evidence=f"NVML lists {names}; tf.config.list_physical_devices('GPU') is empty",
        cause=cause,
        fix=fix,
        span=None,
        impact=1.0,
    )


def gpu_idle(facts: RunFacts) -> Iterator[Finding]:
    """GPUs sampled, TensorFlow sees them, yet every one averaged < 5% utilization."""
    series = gpu_series(facts)
    if not series or _tf_gpus(facts) == []:
        return
    utils = {i: mean(g.util_percent for g in gs) for i, gs in series.items()}
    if any(u is None or u >= GPU_IDLE_UTIL_PERCENT for u in utils.values()):
        return
    held = [
        g.process_memory_used_bytes
        for gs in series.values()
        for g in gs
        if g.process_memory_used_bytes
    ]
    cpu = mean(s.process_cpu_percent for s in facts.active)
    listing = ", ".join(f"GPU {i} {u:.0f}%" for i, u in utils.items() if u is not None)
    yield Finding(
        rule="gpu_idle",
        severity="warning",
        title="GPU idle: the run did its work elsewhere",
        evidence=(
            f"mean utilization {listing} {span_text(facts.window)}; the run's GPU memory "
            f"{size(max(held)) if held else 'none'}; its CPU averaged "
            f"{'n/a' if cpu is None else f'{cpu:.0f}%'}"
        ),
        cause=IDLE_TEXT[facts.framework][0],
        fix=IDLE_TEXT[facts.framework][1],
        span=facts.window,
        impact=0.9,
    )


def _transfer(facts: RunFacts) -> tuple[str, float, float] | None:
    """(workload, transfer s, compute s) where a GPU workload's copy rivals its compute.

    ``tf_matmul`` (tfres bench) times the host-to-device copy apart from the matmul:
    ``details["transfer_seconds_median"]`` against ``seconds_median``.
    """
    keys = ("transfer_seconds_median", "transfer_seconds", "host_to_device_seconds")
    for w in facts.record.workloads:
        if not str(w.get("device", "")).upper().startswith("GPU"):
            continue
        d = w.get("details") or {}
        transfer = next((d[k] for k in keys if isinstance(d.get(k), (int, float))), None)
        compute = d.get("compute_seconds", w.get("seconds_median"))
        if not isinstance(compute, (int, float)) or not transfer or compute <= 0:
            continue
        if transfer >= TRANSFER_BOUND_RATIO * compute:
            name = " ".join(str(x) for x in (w.get("name"), d.get("variant")) if x)
            return name, float(transfer), float(compute)
    return None


def gpu_underused(facts: RunFacts) -> Iterator[Finding]:
    """5-50% mean utilization with spare memory, or a transfer as long as the compute."""
    series = gpu_series(facts)
    transfer = _transfer(facts)
    if transfer:
        name, t, c = transfer
        yield Finding(
            rule="gpu_transfer_bound",
            severity="warning",
            title=f"Transfer-bound: {name} copies for as long as it computes",
            evidence=(
                f"{name}: host-to-device {seconds(t)} against {seconds(c)} of compute "
                f"({t / c:.1f}x)"
            ),
            cause="the data crosses PCIe every step and the GPU waits for it",
            fix=(
                "keep data on the GPU between steps and prefetch to it: dataset.apply("
                "tf.data.experimental.prefetch_to_device('/GPU:0')); do more work per copy (larger "
                "batch)"
            ),
            span=None,
            impact=min(1.0, t / (t + c)),
        )
    for index, gs in series.items():
        # the compute engine's activity where the GPU reports it (GPM): copies left out
        util, measured = _busy(gs)
        total = next((g.memory_total_bytes for g in gs if g.memory_total_bytes), None)
        if util is None or not (GPU_IDLE_UTIL_PERCENT <= util < GPU_UNDERUSED_UTIL_PERCENT):
            continue
        memory = _underused_memory(facts, index, gs, total)
        if memory is None:
            continue
        free_text, memory_text = memory
        yield Finding(
            rule="gpu_underused",
            severity="warning",
            title=f"GPU {index} underused: {util:.0f}% busy{free_text}",
            evidence=(
                f"GPU {index} {measured} {util:.0f}%, {memory_text}, {span_text(facts.window)}"
            ),
            cause=(
                "each step gives the GPU too little work: a small batch, per-step Python overhead, "
                "or the host feeding it too slowly"
            ),
            fix=UNDERUSED_FIX[facts.framework],
            span=facts.window,
            impact=1.0 - util / 100.0,
        )


def _busy(gs: list[Any]) -> tuple[float | None, str]:
    """How busy a GPU was, and what measured it: its compute engine (NVML GPM, Hopper on)
    where read, else NVML's utilization, which counts copies too."""
    engine = mean(g.engine_active_percent for g in gs)
    if engine is not None:
        return engine, "compute engine active (NVML GPM)"
    return mean(g.util_percent for g in gs), "mean utilization"


def gpu_copy_bound(facts: RunFacts) -> Iterator[Finding]:
    """Utilization at least twice the compute engine's activity (GPM): the GPU was copying."""
    for index, gs in gpu_series(facts).items():
        util = mean(g.util_percent for g in gs)
        engine = mean(g.engine_active_percent for g in gs)
        if util is None or engine is None or util < GPU_UNDERUSED_UTIL_PERCENT:
            continue
        if util < COPY_BOUND_RATIO * engine:
            continue
        rx = mean(g.pcie_rx_bytes_per_second for g in gs)
        yield Finding(
            rule="gpu_copy_bound",
            severity="warning",
            title=f"GPU {index} busy copying: {util:.0f}% utilization, kernels {engine:.0f}%",
            evidence=(
                f"GPU {index} utilization {util:.0f}% (nvidia-smi's utilization.gpu, which "
                f"counts copies), its compute engine active {engine:.0f}% (NVML GPM)"
                + (f"; PCIe to the GPU {rx / 1e9:.1f} GB/s on average" if rx else "")
                + f", {span_text(facts.window)}"
            ),
            cause="data crossing PCIe keeps the GPU busy while its kernels wait for it",
            fix=COPY_FIX[facts.framework],
            span=facts.window,
            impact=1.0 - engine / 100.0,
        )


def _underused_memory(
    facts: RunFacts, index: int, gs: list[Any], total: int | None
) -> tuple[str, str] | None:
    """(title tail, evidence) on GPU ``index``'s memory for an underused GPU, or None when
    its memory is in use (the model fills it: not underused, just slow per byte).

    TensorFlow's allocator, where the run read it (``tf_memory``: ``tfres.monitor``, or the
    ``tfres run`` hook), says what the model holds: its peak in use is judged, never NVML's
    used memory, which by default is TensorFlow's reservation of nearly all of it. Without
    the allocator a reservation leaves utilization alone to judge; else NVML's used memory.
    """
    used = mean(g.memory_used_bytes for g in gs)
    peak = _tf_allocator_peak(facts, index)
    reserved = _reserved(facts, gs, total)
    held = max((g.memory_used_bytes or 0 for g in gs), default=0)
    if peak is not None and total:
        if peak >= GPU_SPARE_MEMORY_SHARE * total:
            return None
        text = f"TensorFlow's allocator peaked at {size(peak)} of {size(total)}" + (
            f"; NVML's {size(held)} used is TensorFlow's default reservation" if reserved else ""
        )
        return f" with {pct(1 - peak / total)} of its memory free", text
    if reserved:
        own = [b for b in _own_memory(gs) if b]
        if own:
            return "", (
                f"memory {size(max(own))} of {size(total)} reserved by TensorFlow at start "
                "(its default; what the model uses is not visible from outside)"
            )
        return "", (
            f"memory {size(held)} of {size(total)} used on the GPU, which NVML cannot split "
            "by process here; without memory growth TensorFlow reserves nearly all free "
            "memory at start, so what the model uses is not visible from outside"
        )
    if used is None or not total or used / total >= GPU_SPARE_MEMORY_SHARE:
        return None
    return (
        f" with {pct(1 - used / total)} of its memory free",
        f"memory {size(used)} of {size(total)}",
    )


def _tf_allocator_peak(facts: RunFacts, index: int) -> int | None:
    """TensorFlow's allocator peak (bytes in use) on NVML GPU ``index``: its ``GPU:i``
    mapped to NVML's index, from the samples' ``tf_memory``; None where not read."""
    device = _tf_device_of(facts, index)
    if device is None:
        return None
    peaks = [
        int(m.get("peak_bytes") or 0)
        for s in facts.record.samples
        for dev, m in s.tf_memory.items()
        if dev.upper() == device
    ]
    return max(peaks) if peaks else None


def _allocator_peak(facts: RunFacts, index: int, gs: list[Any]) -> tuple[int, str]:
    """The highest allocator figure for NVML GPU ``index`` and where it came from.

    TensorFlow's own peak (its ``GPU:i`` mapped to NVML's index) where the program's process
    was sampled from inside; else, with memory growth on, the run's NVML memory, which is
    then the allocator's pool at its largest. Without either: 0 (nothing to judge).
    """
    peak = _tf_allocator_peak(facts, index)
    if peak is not None:
        return peak, "TensorFlow allocator peak"
    own = _own_memory(gs)
    if own and _growth_on(facts):
        return max(own), "TensorFlow's memory pool (memory growth on) peaked at"
    return 0, ""


def gpu_memory_peak(facts: RunFacts) -> Iterator[Finding]:
    """The TF allocator's peak >= 90% of a GPU's memory, or others holding >= 25% of it."""
    totals: dict[int, int] = {}
    for s in facts.record.samples:
        for g in s.gpus:
            if g.memory_total_bytes:
                totals[g.index] = g.memory_total_bytes
    for g in facts.fingerprint.get("gpus") or []:
        if isinstance(g, dict) and isinstance(g.get("memory_total_bytes"), int):
            totals.setdefault(int(g.get("index", 0)), g["memory_total_bytes"])
    series = gpu_series(facts)
    for index, total in sorted(totals.items()):
        peak, source = _allocator_peak(facts, index, series.get(index, []))
        if peak >= GPU_MEMORY_NEAR_FULL * total:
            yield Finding(
                rule="gpu_memory_peak",
                severity="warning",
                title=f"GPU {index} memory nearly full: TensorFlow peaked at {pct(peak / total)}",
                evidence=f"{source} {size(peak)} of {size(total)} on GPU {index}",
                cause="the batch, activations and optimizer state almost fill the GPU",
                fix=(
                    "lower the batch size or use mixed precision: "
                    "keras.mixed_precision.set_global_policy('mixed_float16')"
                ),
                span=None,
                impact=peak / total,
            )
        others = [
            (g.memory_used_bytes - g.process_memory_used_bytes)
            for s in facts.active
            for g in s.gpus
            if g.index == index
            and g.memory_used_bytes is not None
            and g.process_memory_used_bytes is not None
        ]
        held = mean(others)
        if held is not None and held >= GPU_OTHERS_MEMORY_SHARE * total:
            procs = [
                p
                for g in facts.fingerprint.get("gpus") or []
                if isinstance(g, dict) and g.get("index") == index
                for p in g.get("processes") or []
            ]
            named = (
                ", ".join(
                    f"{p.get('name')} (pid {p.get('pid')}, {size(p.get('used_memory_bytes'))})"
                    for p in procs[:3]
                )
                or "not named in this record"
            )
            yield Finding(
                rule="background_gpu",
                severity="warning",
                title=f"Other processes hold {pct(held / total)} of GPU {index}'s memory",
                evidence=(
                    f"{size(held)} of {size(total)} on GPU {index} used outside the run; "
                    f"processes: {named}"
                ),
                cause="another program shares the GPU and its memory",
                fix=(
                    "nvidia-smi  # find and stop it, or run on another GPU: export "
                    "CUDA_VISIBLE_DEVICES=1"
                ),
                span=facts.window,
                impact=held / total,
            )
