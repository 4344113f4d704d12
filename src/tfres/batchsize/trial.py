"""One batch-size trial, in a process of its own: ``python -m tfres._trial SPEC.json OUT.json``.

The spec names the model function and the data (see :mod:`tfres.batchsize.finder`), the batch size,
the number of timed steps and the device. The child builds the model, runs one warm-up step
and ``steps`` timed ``train_on_batch`` calls, and writes what happened to OUT.json:
``{"status": "ok"|"oom"|"error", "peak_bytes", "tf_peak_bytes", "samples_per_second",
"seconds", "device", "error"}``. ``peak_bytes`` is the process's peak RSS (``ru_maxrss``:
exact, the kernel's own high-water mark) on the CPU, or the TensorFlow allocator's peak on a
GPU. Running out of memory (``ResourceExhaustedError``, ``MemoryError``) is a result, not a
crash; the parent's watchdog ends a trial that goes past the budget before it can hurt.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from tfres.backends.memory import peak_rss_bytes
from tfres.backends.tf import load_tensorflow
from tfres.backends.tf_config import gpu_count
from tfres.backends.tf_placement import on_device
from tfres.backends.tf_runtime import memory_info
from tfres.devices.configure import configure
from tfres.user_code import load_callable

__all__ = ["main"]


def _take(data: Any, n: int, np: Any) -> Any:
    """The first ``n`` rows of every array in ``data``, repeated when there are fewer."""
    if isinstance(data, dict):
        return {k: _take(v, n, np) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return type(data)(_take(v, n, np) for v in data)
    arr = np.asarray(data)
    return np.take(arr, np.arange(n) % len(arr), axis=0)


def _load_data(spec: dict[str, Any], np: Any) -> tuple[Any, Any]:
    if spec.get("data_ref"):
        made = load_callable(spec["data_ref"])()
        if not (isinstance(made, (tuple, list)) and len(made) == 2):
            raise ValueError(f"{spec['data_ref']} must return (x, y) (got {type(made).__name__})")
        return made[0], made[1]
    return np.load(spec["x_path"]), np.load(spec["y_path"])


def run_trial(spec: dict[str, Any]) -> dict[str, Any]:
    """Run the trial the spec describes; never raises for an out-of-memory."""
    result: dict[str, Any] = {
        "status": "error",
        "peak_bytes": None,
        "tf_peak_bytes": None,
        "samples_per_second": None,
        "seconds": None,
        "device": None,
        "error": None,
    }
    started = time.monotonic()
    gpu = spec.get("device") == "gpu"
    if gpu and spec.get("budget_bytes"):
        configure(gpu_memory_limit_bytes=int(spec["budget_bytes"]))
    import numpy as np

    tf = load_tensorflow()
    if gpu and not gpu_count():
        result["error"] = "TensorFlow sees no GPU here (see `tfres doctor`); use device='cpu'"
        return result
    device = "GPU:0" if gpu else "CPU:0"
    result["device"] = device
    batch = int(spec["batch_size"])
    try:
        x, y = _load_data(spec, np)
        xb, yb = _take(x, batch, np), _take(y, batch, np)
        del x, y
        model = load_callable(spec["model_ref"])()
        if getattr(model, "optimizer", None) is None:
            raise ValueError(f"{spec['model_ref']} must return a compiled model (call compile())")
        with on_device(device):
            model.train_on_batch(xb, yb)  # warm-up: tracing, allocation
            t0 = time.perf_counter()
            for _ in range(int(spec["steps"])):
                model.train_on_batch(xb, yb)
            elapsed = time.perf_counter() - t0
        result["status"] = "ok"
        result["samples_per_second"] = batch * int(spec["steps"]) / elapsed if elapsed > 0 else None
    except (tf.errors.ResourceExhaustedError, MemoryError) as err:
        result["status"] = "oom"
        result["error"] = f"{type(err).__name__}: {str(err).splitlines()[0][:300]}"
    except Exception as err:
        result["error"] = f"{type(err).__name__}: {(str(err).splitlines() or [''])[0][:300]}"
    finally:
        result["seconds"] = round(time.monotonic() - started, 3)
    info = memory_info(device)
    if info is not None:
        result["tf_peak_bytes"] = info["peak_bytes"]
    rss_peak = peak_rss_bytes()
    result["peak_bytes"] = result["tf_peak_bytes"] if gpu else rss_peak
    return result


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    spec = json.loads(Path(args[0]).read_text())
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    result = run_trial(spec)
    tmp = Path(args[1] + ".tmp")
    tmp.write_text(json.dumps(result))
    os.replace(tmp, args[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
