"""The environment half of ``tfres compare``: two fingerprints side by side, ordered by
how much each item tends to move performance, with unchanged items folded away.

Order (most impact first): GPU model and memory; driver, CUDA, cuDNN and TensorFlow
versions; usable cores, CPU quota, affinity and the CPU itself; RAM; BLAS library and thread
pools; behaviour-changing environment variables; background load during the run; the rest
of the software. A value a record does not hold is ``None`` ("not recorded"): records of
different tfres versions compare what they share and say what one of them lacks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from tfres.diagnosis.facts import RunFacts
from tfres.units import format_bytes, format_cpu_list

__all__ = ["EnvItem", "environment_diff", "CATEGORIES", "BACKGROUND_CHANGE_CORES"]

#: The order in which categories are shown: most likely to move performance first.
CATEGORIES = ("gpu", "versions", "cpu", "memory", "threads", "env", "load", "software")
#: Background load differing by a quarter core or more counts as a change (sampler noise and
#: system daemons stay well below it on an idle machine).
BACKGROUND_CHANGE_CORES = 0.25
#: Numbers within 2% are the same (RAM totals shift by the kernel's reservations; CPU clocks
#: read from /proc wobble by a few MHz).
RELATIVE_SAME = 0.02

#: Environment variables shown first among the env items: they set thread pools and devices.
_ENV_FIRST = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "TF_NUM_INTRAOP_THREADS",
    "TF_NUM_INTEROP_THREADS",
    "CUDA_VISIBLE_DEVICES",
    "TF_FORCE_GPU_ALLOW_GROWTH",
    "TF_ENABLE_ONEDNN_OPTS",
    "TF_XLA_FLAGS",
)


@dataclass(frozen=True)
class EnvItem:
    """One line of the environment diff; ``a``/``b`` are display text, None if not recorded."""

    key: str
    label: str
    category: str
    a: str | None
    b: str | None
    changed: bool

    @property
    def missing(self) -> bool:
        """One record holds the value and the other does not."""
        return (self.a is None) != (self.b is None)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EnvItem:
        return cls(
            key=str(d["key"]),
            label=str(d["label"]),
            category=str(d["category"]),
            a=d.get("a"),
            b=d.get("b"),
            changed=bool(d.get("changed")),
        )


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _close(a: Any, b: Any) -> bool:
    x, y = _num(a), _num(b)
    if x is not None and y is not None:
        return abs(x - y) <= RELATIVE_SAME * max(abs(x), abs(y), 1e-12)
    return a == b


def _cores_text(n: float | None) -> str | None:
    if n is None:
        return None
    return f"{n:g}"


def _ranges(cpus: tuple[int, ...] | None) -> str | None:
    """``(0, 1, 2, 5)`` -> ``"0-2,5"``, the way taskset writes a CPU list."""
    return format_cpu_list(cpus) or None


def _gpus(f: RunFacts) -> list[dict[str, Any]] | None:
    if "gpus" not in f.fingerprint:
        return None
    return [g for g in f.fingerprint.get("gpus") or [] if isinstance(g, dict)]


def _gpu_models(f: RunFacts) -> str | None:
    gpus = _gpus(f)
    if gpus is None:
        return None
    if not gpus:
        return "none"
    return ", ".join(str(g.get("name")) for g in gpus)


def _gpu_memory(f: RunFacts) -> str | None:
    gpus = _gpus(f)
    if not gpus:
        return None if gpus is None else "none"
    return ", ".join(format_bytes(g.get("memory_total_bytes")) for g in gpus)


def _first_gpu(f: RunFacts, key: str) -> str | None:
    gpus = _gpus(f)
    if not gpus:
        return None
    value = gpus[0].get(key)
    return None if value is None else str(value)


def _tf(f: RunFacts, key: str) -> str | None:
    tf = f.section("tensorflow")
    if not tf:
        return None
    if key == "version":
        return str(tf.get("version")) if tf.get("installed") else "not installed"
    value = (tf.get("build_info") or {}).get(key)
    return None if value is None else str(value)


def _get(f: RunFacts, section: str, key: str) -> Any:
    return f.section(section).get(key)


def _isa(f: RunFacts) -> str | None:
    flags = _get(f, "cpu", "isa_flags")
    if not isinstance(flags, dict):
        return None
    on = [name for name in ("avx2", "fma", "avx512f") if flags.get(name)]
    return "+".join(on) if on else "none of avx2/fma/avx512f"


def _quota(f: RunFacts) -> str | None:
    cpu = f.section("cpu")
    if not cpu:
        return None
    return "none" if f.cpu_quota_cores is None else f"{f.cpu_quota_cores:g} cores"


def _memory_limit(f: RunFacts) -> str | None:
    mem = f.section("memory")
    if not mem:
        return None
    limit = mem.get("cgroup_memory_limit_bytes")
    return "none" if limit is None else format_bytes(limit)


def _blas_library(f: RunFacts) -> str | None:
    pools = f.fingerprint.get("blas")
    if not isinstance(pools, list):
        return None
    names = [
        f"{p.get('internal_api')} {p.get('version') or ''}".strip()
        for p in pools
        if isinstance(p, dict) and p.get("internal_api")
    ]
    return ", ".join(dict.fromkeys(names)) or "none"


def _thread(f: RunFacts, pool: str) -> str | None:
    count = getattr(f.threads, pool)
    if count is None:
        return None
    source = f.threads.source(pool)
    return f"{count} ({source})" if source else str(count)


def _background(f: RunFacts) -> str | None:
    value = f.background_cores_mean
    return None if value is None else f"{value:.1f} cores"


def _top_processes(f: RunFacts) -> str | None:
    load = f.section("load")
    if not load:
        return None
    top = [
        p
        for p in load.get("top_cpu") or []
        if isinstance(p, dict) and (_num(p.get("cpu_percent")) or 0) >= 10
    ]
    return (
        ", ".join(f"{p.get('name')} {float(p['cpu_percent']):.0f}%" for p in top[:3])
        or "none above 10%"
    )


#: (key, label, category, getter): the order within a category is the display order.
_ITEMS: tuple[tuple[str, str, str, Callable[[RunFacts], Any]], ...] = (
    ("gpu.models", "GPU", "gpu", _gpu_models),
    ("gpu.memory", "GPU memory", "gpu", _gpu_memory),
    ("gpu.driver", "NVIDIA driver", "versions", lambda f: _first_gpu(f, "driver_version")),
    (
        "gpu.cuda_driver",
        "CUDA (driver)",
        "versions",
        lambda f: _first_gpu(f, "cuda_driver_version"),
    ),
    ("tf.cuda", "CUDA (TF build)", "versions", lambda f: _tf(f, "cuda_version")),
    ("tf.cudnn", "cuDNN (TF build)", "versions", lambda f: _tf(f, "cudnn_version")),
    ("tf.version", "TensorFlow", "versions", lambda f: _tf(f, "version")),
    ("cpu.usable_cores", "usable cores", "cpu", lambda f: _cores_text(f.usable_cores)),
    ("cpu.quota", "CPU quota (cgroup)", "cpu", _quota),
    ("cpu.affinity", "CPU affinity", "cpu", lambda f: _ranges(f.affinity)),
    ("cpu.logical_cores", "logical cores", "cpu", lambda f: f.logical_cores),
    ("cpu.physical_cores", "physical cores", "cpu", lambda f: _get(f, "cpu", "physical_cores")),
    ("cpu.model", "CPU model", "cpu", lambda f: _get(f, "cpu", "model")),
    ("cpu.isa", "vector ISA", "cpu", _isa),
    ("cpu.frequency_mhz", "CPU clock (MHz)", "cpu", lambda f: _get(f, "cpu", "frequency_mhz")),
    ("memory.total", "RAM", "memory", lambda f: f.memory_total_bytes),
    ("memory.cgroup_limit", "memory limit (cgroup)", "memory", _memory_limit),
    ("blas.library", "BLAS library", "threads", _blas_library),
    ("threads.blas", "BLAS threads", "threads", lambda f: _thread(f, "blas")),
    ("threads.tf_intra_op", "TF intra-op threads", "threads", lambda f: _thread(f, "tf_intra_op")),
    ("threads.tf_inter_op", "TF inter-op threads", "threads", lambda f: _thread(f, "tf_inter_op")),
    ("load.background", "other processes' CPU", "load", _background),
    ("load.top", "busiest other processes", "load", _top_processes),
    ("software.python", "Python", "software", lambda f: _get(f, "host", "python")),
    ("software.numpy", "NumPy", "software", lambda f: _get(f, "numpy", "version")),
    ("software.os", "OS", "software", lambda f: _get(f, "host", "os")),
    ("software.kernel", "kernel", "software", lambda f: _get(f, "host", "kernel")),
    ("software.tfres", "tfres", "software", lambda f: f.record.tfres_version or None),
)


def _display(key: str, value: Any) -> str | None:
    if value is None:
        return None
    if key == "memory.total":
        return format_bytes(value)
    if key == "cpu.frequency_mhz" and _num(value) is not None:
        return f"{float(value):.0f}"
    return str(value)


def _changed(key: str, a: Any, b: Any) -> bool:
    if a is None or b is None:
        return False
    if key == "load.background":
        return abs((a or 0) - (b or 0)) >= BACKGROUND_CHANGE_CORES
    if key == "load.top":
        return False  # shown for the names; load.background carries the change
    return not _close(a, b)


def _env_items(fa: RunFacts, fb: RunFacts) -> list[EnvItem]:
    has_a = "env" in fa.fingerprint or bool(fa.env)
    has_b = "env" in fb.fingerprint or bool(fb.env)
    if not has_a and not has_b:
        return []
    ea, eb = fa.env, fb.env
    names = sorted(
        set(ea) | set(eb), key=lambda n: (_ENV_FIRST.index(n) if n in _ENV_FIRST else 99, n)
    )
    items = []
    for name in names:
        a = None if not has_a else str(ea[name]) if name in ea else "unset"
        b = None if not has_b else str(eb[name]) if name in eb else "unset"
        items.append(
            EnvItem(f"env.{name}", name, "env", a, b, a is not None and b is not None and a != b)
        )
    return items


def environment_diff(fa: RunFacts, fb: RunFacts) -> list[EnvItem]:
    """Every environment item of the two records: changed ones first by category order."""
    items: list[EnvItem] = []
    for key, label, category, getter in _ITEMS:
        raw_a = fa.background_cores_mean if key == "load.background" else getter(fa)
        raw_b = fb.background_cores_mean if key == "load.background" else getter(fb)
        if raw_a is None and raw_b is None:
            continue
        shown_a = _background(fa) if key == "load.background" else _display(key, raw_a)
        shown_b = _background(fb) if key == "load.background" else _display(key, raw_b)
        items.append(EnvItem(key, label, category, shown_a, shown_b, _changed(key, raw_a, raw_b)))
    items.extend(_env_items(fa, fb))
    order = {c: i for i, c in enumerate(CATEGORIES)}
    return sorted(items, key=lambda it: (not it.changed, order.get(it.category, 99)))
