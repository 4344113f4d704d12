"""``overlap``: host preprocessing beside device compute, naive versus overlapped.

Each example is a JPEG image read from a TFRecord file (random smooth colours, encoded once
into a temporary folder at the start); preprocessing decodes it (``tf.io.decode_jpeg``, one
core per image), resizes it to 64 x 64 and flips it at random: the usual image
classification input side. The same small model (``Dense(hidden) -> Dense(hidden) ->
Dense(1)`` on the pixels, SGD, learning each image's mean brightness) trains one epoch per
repeat on each selected device, fed two ways from the same data:

- ``naive``: :func:`tfres.placement.pipeline.naive_pipeline`: sequential map, no prefetch: the host
  decodes a batch, then the device computes on it, never both at once;
- ``overlapped``: :func:`tfres.placement.pipeline.input_pipeline`: parallel map, prefetch (and
  prefetch to the GPU when the device is one).

The two alternate (A/B interleaved, the order swapped each repeat) after one warm-up epoch
each; every epoch iterates afresh (see :func:`_epoch`). The figures per variant:
examples/s, and from the timestamped spans (see :func:`tfres.placement.pipeline.overlap`) the
overlap fraction: the share of the epoch during which preprocessing and training steps ran
at the same time. The ``overlapped`` row's ``details["speedup"]`` is naive median time /
overlapped median time.
"""

from __future__ import annotations

import gc
import os
import tempfile
import time
from typing import Any

from tfres.backends.tf import load_tensorflow
from tfres.backends.tf_placement import on_device
from tfres.placement.pipeline import SpanRecorder, input_pipeline, naive_pipeline
from tfres.workloads._context import Workload, WorkloadContext, error_text, make_result, median

__all__ = ["WORKLOAD", "run"]

NAME = "overlap"
VARIANTS = ("naive", "overlapped")


def _write_jpegs(tf: Any, ctx: WorkloadContext, p: dict[str, Any], path: str) -> int:
    """Random smooth colour images, JPEG-encoded into one TFRecord file; returns the count."""
    n, size = int(p["examples"]), int(p["image_size"])
    rng = ctx.rng(7)
    with tf.io.TFRecordWriter(path) as writer:
        for _ in range(n):
            coarse = (rng.random((max(2, size // 8), max(2, size // 8), 3)) * 255).astype("uint8")
            image = tf.cast(tf.image.resize(coarse, (size, size)), tf.uint8)
            writer.write(tf.io.encode_jpeg(image, quality=90).numpy())
    return n


def _preprocess(tf: Any) -> Any:
    def preprocess(jpeg: Any) -> Any:
        img = tf.io.decode_jpeg(jpeg, channels=3)
        img = tf.image.resize(img, (64, 64))
        img = tf.image.random_flip_left_right(img)
        x = tf.reshape(img, (-1,)) / 255.0
        return x, tf.reduce_mean(x, keepdims=True)  # learn the brightness: a real target

    return preprocess


def _train_step(tf: Any, keras: Any, hidden: int, seed: int) -> Any:
    keras.utils.set_random_seed(seed)
    model = keras.Sequential(
        [
            keras.Input((64 * 64 * 3,)),
            keras.layers.Dense(hidden, activation="relu"),
            keras.layers.Dense(hidden, activation="relu"),
            keras.layers.Dense(1),
        ]
    )
    optimizer = keras.optimizers.SGD(0.01)
    loss_fn = keras.losses.MeanSquaredError()

    @tf.function
    def train_step(x: Any, y: Any) -> Any:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    return train_step


def _epoch(tf: Any, dataset: Any, train_step: Any, device: str) -> tuple[float, int, Any]:
    """One epoch through a fresh iterator; its seconds, examples and overlap report.

    A fresh iterator each epoch, as ``for batch in dataset`` gives: a prefetching iterator
    kept alive between epochs would go on preparing batches in the background while the
    other variant is timed, taking its CPU and flattering itself.
    """

    gc.collect()  # the last epoch's iterator goes now, not inside this epoch's timing
    recorder = SpanRecorder()
    examples = 0
    start = time.time()
    t0 = time.perf_counter()
    with on_device(device):
        for (x, y), spans in dataset:
            recorder.add_preprocess(spans)
            with recorder.step():
                float(train_step(x, y))
            examples += int(x.shape[0])
    seconds = time.perf_counter() - t0
    return seconds, examples, recorder.report(window=(start, time.time()))


def run(ctx: WorkloadContext) -> list[dict[str, Any]]:
    tf = load_tensorflow()  # before keras, which imports TensorFlow less quietly
    import keras

    p = WORKLOAD.params(quick=ctx.quick, overrides=ctx.params)
    ctx.report(0.0, "encoding images")
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="tfres-overlap-") as folder:
        path = os.path.join(folder, "images.tfrecord")
        n_images = _write_jpegs(tf, ctx, p, path)
        for index, device in enumerate(ctx.devices):
            with ctx.phase(f"{NAME} {device}"):
                results += _run_device(ctx, tf, keras, device, index, path, n_images, p)
    ctx.report(1.0, "done")
    return results


def _run_device(
    ctx: WorkloadContext,
    tf: Any,
    keras: Any,
    device: str,
    index: int,
    path: str,
    n_images: int,
    p: dict[str, Any],
) -> list[dict[str, Any]]:
    """Both variants on one device, A/B interleaved; their two result rows."""
    times: dict[str, list[float]] = {v: [] for v in VARIANTS}
    reports: dict[str, list[Any]] = {v: [] for v in VARIANTS}
    error = None
    with ctx.span() as span:
        try:
            datasets = _datasets(tf, path, device, int(p["batch_size"]))
            train_step = _train_step(tf, keras, int(p["hidden"]), ctx.seed)
            _interleaved(
                ctx, tf, datasets, train_step, device, index, int(p["repeats"]), times, reports
            )
        except (tf.errors.ResourceExhaustedError, MemoryError) as err:
            error = f"out of memory: {error_text(err)}"
        except (tf.errors.OpError, RuntimeError, ValueError) as err:
            error = error_text(err)
    naive_median = median(times["naive"])
    rows = []
    for variant in VARIANTS:
        details = _details(variant, times[variant], reports[variant], naive_median)
        seconds = median(times[variant])
        params = {
            "pipeline": variant,
            "examples": n_images,
            "batch_size": int(p["batch_size"]),
            "image_size": int(p["image_size"]),
            "hidden": int(p["hidden"]),
        }
        rows.append(
            make_result(
                ctx,
                name=NAME,
                device=device,
                params=params,
                times=times[variant],
                span=span,
                throughput=n_images / seconds if seconds else None,
                throughput_unit="examples/s",
                details=details,
                error=error,
            )
        )
    return rows


def _datasets(tf: Any, path: str, device: str, batch: int) -> dict[str, Any]:
    """The two variants over the TFRecord file: sequential, and overlapped onto ``device``."""
    preprocess = _preprocess(tf)
    source = tf.data.TFRecordDataset(path)
    target = device if device.upper().startswith("GPU") else "CPU:0"
    return {
        "naive": naive_pipeline(source, preprocess, batch_size=batch, timestamps=True),
        "overlapped": input_pipeline(
            source, preprocess, batch_size=batch, timestamps=True, device=target
        ),
    }


def _interleaved(
    ctx: WorkloadContext,
    tf: Any,
    datasets: dict[str, Any],
    train_step: Any,
    device: str,
    index: int,
    repeats: int,
    times: dict[str, list[float]],
    reports: dict[str, list[Any]],
) -> None:
    """A warm-up epoch of each variant, then ``repeats`` epochs of both, the order flipped
    each round; each epoch's seconds and overlap report appended as it ends."""
    for variant in VARIANTS:  # warm-up: tracing, autotune's first guesses
        _epoch(tf, datasets[variant], train_step, device)
    for r in range(repeats):
        for variant in VARIANTS if r % 2 == 0 else VARIANTS[::-1]:
            done = (index + (r + 0.5) / repeats) / len(ctx.devices)
            ctx.report(done, f"{device} {variant} {r + 1}/{repeats}")
            took, _, report = _epoch(tf, datasets[variant], train_step, device)
            times[variant].append(took)
            reports[variant].append(report)


def _details(
    variant: str, times: list[float], got: list[Any], naive_median: float | None
) -> dict[str, Any]:
    """A variant's epochs and the medians of its overlap reports (speed-up for overlapped)."""
    details: dict[str, Any] = {
        "variant": variant,
        "epoch_seconds": times,
        "overlap_fraction": median([r.overlap_fraction for r in got]),
        "hidden_fraction": median(
            [r.hidden_fraction for r in got if r.hidden_fraction is not None]
        ),
        "preprocess_busy_fraction": median(
            [r.preprocess_busy_seconds / r.run_seconds for r in got]
        ),
        "compute_busy_fraction": median([r.compute_busy_fraction for r in got]),
        "overlap_source": "spans",
    }
    if variant == "overlapped":
        seconds = median(times)
        details["speedup"] = naive_median / seconds if naive_median and seconds else None
    return details


WORKLOAD = Workload(
    name=NAME,
    description="JPEG decode+resize beside a small model: naive vs overlapped input pipeline",
    run=run,
    quick_params={
        "examples": 256,
        "image_size": 512,
        "batch_size": 32,
        "hidden": 128,
        "repeats": 3,
    },
    full_params={"examples": 512, "image_size": 512, "batch_size": 32, "hidden": 128, "repeats": 5},
)
