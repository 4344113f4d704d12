"""``batch_sweep``: the same training at batch sizes 16, 128 and 512; where do bigger
batches stop paying, and what do they cost in memory?

On each selected device and for each batch size, a fresh MLP (``features -> hidden x
layers -> classes``, ReLU, Adam) trains on ``samples`` random examples with ``model.fit``:
one warm-up epoch, then ``repeats`` timed epochs. The figures per batch size: seconds per
epoch, samples/s, peak host RSS (from the sampler) and the TensorFlow allocator's peak.

Out of memory is a result, not a crash: before training, one forward pass runs eagerly on
one batch, where TensorFlow raises ``ResourceExhaustedError`` cleanly (on the CPU, an
out-of-memory inside a compiled graph can kill the process instead). That error, or a
``MemoryError``, is recorded for the batch size, and the larger ones are skipped.
"""

from __future__ import annotations

from typing import Any

from tfres.backends.tf import load_tensorflow
from tfres.backends.tf_placement import on_device
from tfres.backends.tf_runtime import memory_info, reset_memory_peak
from tfres.workloads._context import (
    Workload,
    WorkloadContext,
    epoch_timer,
    error_text,
    make_result,
    median,
)

__all__ = ["WORKLOAD", "run", "verdict"]

NAME = "batch_sweep"

#: a batch size "pays" when it is at least this much faster than the one before it
PAYING_GAIN = 1.10


def verdict(rows: list[tuple[int, float | None]]) -> tuple[str, int | None]:
    """Say where larger batches stop paying, from ``(batch_size, samples_per_second)`` rows.

    Returns the sentence and the best batch size (None when no batch size ran).

    >>> verdict([(16, 1000.0), (128, 4000.0), (512, 4100.0)])[1]
    128
    """
    ran = sorted((b, s) for b, s in rows if s)
    if not ran:
        return "no batch size ran to the end", None
    if len(ran) == 1:
        return f"only batch {ran[0][0]} ran ({ran[0][1]:.0f} samples/s)", ran[0][0]
    best = ran[0]
    for (b_prev, s_prev), (b, s) in zip(ran, ran[1:], strict=False):
        gain = s / s_prev
        if gain < PAYING_GAIN:
            return (
                f"larger batches stop paying above {b_prev}: batch {b} gives {gain:.2f}x the "
                f"samples/s of batch {b_prev} (below {PAYING_GAIN:.2f}x)",
                b_prev,
            )
        best = (b, s)
    first = ran[0]
    return (
        f"every larger batch paid: batch {best[0]} gives {best[1] / first[1]:.1f}x the "
        f"samples/s of batch {first[0]}; try larger ones if memory allows",
        best[0],
    )


def _train(keras: Any, x: Any, y: Any, batch: int, p: dict[str, Any], seed: int) -> list[float]:
    keras.utils.set_random_seed(seed)
    layers: list[Any] = [keras.Input((x.shape[1],))]
    for _ in range(int(p["layers"])):
        layers.append(keras.layers.Dense(int(p["hidden"]), activation="relu"))
    layers.append(keras.layers.Dense(int(p["classes"])))
    model = keras.Sequential(layers)
    # the eager probe: an out-of-memory here raises instead of crashing a compiled graph
    model(x[:batch], training=False)
    model.compile(
        optimizer=keras.optimizers.Adam(),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    times: list[float] = []

    steps = p.get("max_steps_per_epoch")
    model.fit(
        x,
        y,
        batch_size=batch,
        epochs=int(p["repeats"]) + 1,
        verbose=0,
        shuffle=False,
        steps_per_epoch=None if steps is None else min(int(steps), -(-len(x) // batch)),
        callbacks=[epoch_timer(keras, times)],
    )
    return times


def run(ctx: WorkloadContext) -> list[dict[str, Any]]:
    tf = load_tensorflow()  # before keras, which imports TensorFlow less quietly
    import keras

    p = WORKLOAD.params(quick=ctx.quick, overrides=ctx.params)
    batch_sizes = sorted(int(b) for b in p["batch_sizes"])
    samples = int(p["samples"])
    rng = ctx.rng(3)
    x = rng.standard_normal((samples, int(p["features"]))).astype("float32")
    y = rng.integers(0, int(p["classes"]), size=samples).astype("int32")
    results: list[dict[str, Any]] = []
    total = len(ctx.devices) * len(batch_sizes)
    done = 0
    for device in ctx.devices:
        rows: list[dict[str, Any]] = []
        out_of_memory_at: int | None = None
        with ctx.phase(f"{NAME} {device}"):
            for batch in batch_sizes:
                ctx.report(done / total, f"{device} batch {batch}")
                done += 1
                row = _one_batch(ctx, tf, keras, device, x, y, batch, p, out_of_memory_at)
                if row["details"]["out_of_memory"]:
                    out_of_memory_at = batch
                rows.append(row)
        _add_verdict(rows)
        results.extend(rows)
    ctx.report(1.0, "done")
    return results


def _one_batch(
    ctx: WorkloadContext,
    tf: Any,
    keras: Any,
    device: str,
    x: Any,
    y: Any,
    batch: int,
    p: dict[str, Any],
    out_of_memory_at: int | None,
) -> dict[str, Any]:
    """The result row of training at ``batch`` on ``device``; skipped (with the reason) once
    a smaller batch ran out of memory. ``details["out_of_memory"]`` says whether this one did.
    """
    samples = len(x)
    times: list[float] = []
    error = None
    mem = None
    ran_out = False
    with ctx.span() as span:
        if out_of_memory_at is not None:
            error = f"skipped: batch {out_of_memory_at} already ran out of memory"
        else:
            reset_memory_peak(device)
            try:
                with on_device(device):
                    times = _train(keras, x, y, batch, p, ctx.seed)
            except (tf.errors.ResourceExhaustedError, MemoryError) as err:
                ran_out = True
                error = f"out of memory at batch {batch}: {error_text(err)}"
            except (tf.errors.OpError, RuntimeError, ValueError) as err:
                error = error_text(err)
            mem = memory_info(device)
    seconds = median(times)
    steps = p.get("max_steps_per_epoch")
    per_epoch = samples if steps is None else min(samples, int(steps) * batch)
    return make_result(
        ctx,
        name=NAME,
        device=device,
        params={"batch_size": batch, "samples": samples},
        times=times,
        span=span,
        throughput=per_epoch / seconds if seconds else None,
        throughput_unit="samples/s",
        peak_tf_memory_bytes=mem["peak_bytes"] if mem else None,
        details={"variant": f"batch {batch}", "out_of_memory": ran_out},
        error=error,
    )


def _add_verdict(rows: list[dict[str, Any]]) -> None:
    """Each row's gain over the previous batch size, and the device's verdict and best size."""
    text, best = verdict([(r["params"]["batch_size"], r["throughput"]) for r in rows])
    prev: float | None = None
    for r in rows:
        thr = r["throughput"]
        r["details"]["gain_vs_previous"] = thr / prev if thr and prev else None
        r["details"]["verdict"] = text
        r["details"]["best_batch_size"] = best
        prev = thr or prev


WORKLOAD = Workload(
    name=NAME,
    description="model.fit at batch sizes 16/128/512 on 2048 samples: samples/s and peak memory",
    run=run,
    quick_params={
        "batch_sizes": [16, 128, 512],
        "samples": 2048,
        "features": 256,
        "hidden": 512,
        "layers": 2,
        "classes": 10,
        "repeats": 2,
        "max_steps_per_epoch": None,
    },
    full_params={
        "batch_sizes": [16, 128, 512],
        "samples": 2048,
        "features": 1024,
        "hidden": 1024,
        "layers": 2,
        "classes": 10,
        "repeats": 5,
        "max_steps_per_epoch": None,
    },
)
