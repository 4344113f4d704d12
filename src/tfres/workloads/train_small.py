"""``train_small``: the two-layer Dense(10)/Dense(1) model, trained two ways.

On each selected device, a ``Dense(10, relu) -> Dense(1)`` Keras model learns 1000 x 100
random inputs for 5 epochs (batch 32, Adam, MSE): once with a ``tf.GradientTape`` loop in
a ``tf.function``, once with ``model.fit``. One extra epoch first is the warm-up (tracing,
graph building) and is not timed; each timed epoch is one repeat. The figures: steps per
second, seconds per step, CPU% and device utilization. The model is so small that this
measures per-step overhead (Python, tf.function dispatch, the input pipeline), not FLOPs.
"""

from __future__ import annotations

import time
from typing import Any

from tfres.backends.tf import load_tensorflow
from tfres.backends.tf_placement import on_device
from tfres.backends.tf_runtime import memory_info, reset_memory_peak
from tfres.workloads._context import (
    Workload,
    WorkloadContext,
    epoch_timer,
    failure_text,
    make_result,
    median,
    tf_failures,
)

__all__ = ["WORKLOAD", "run"]

NAME = "train_small"


def _model(keras: Any, features: int, seed: int) -> Any:
    keras.utils.set_random_seed(seed)
    model = keras.Sequential(
        [
            keras.Input((features,)),
            keras.layers.Dense(10, activation="relu"),
            keras.layers.Dense(1),
        ]
    )
    return model


def _tape_epochs(
    tf: Any, keras: Any, x: Any, y: Any, p: dict[str, Any], seed: int
) -> tuple[list[float], float]:
    model = _model(keras, x.shape[1], seed)
    optimizer = keras.optimizers.Adam()
    loss_fn = keras.losses.MeanSquaredError()
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(int(p["batch_size"]))

    @tf.function
    def train_step(xb: Any, yb: Any) -> Any:
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    times: list[float] = []
    last = float("nan")
    for epoch in range(int(p["epochs"]) + 1):  # epoch 0 is the warm-up
        t = time.perf_counter()
        loss = None
        for xb, yb in ds:
            loss = train_step(xb, yb)
        if loss is not None:
            last = float(loss)  # waits for the last step
        if epoch > 0:
            times.append(time.perf_counter() - t)
    return times, last


def _fit_epochs(
    keras: Any, x: Any, y: Any, p: dict[str, Any], seed: int
) -> tuple[list[float], float]:
    model = _model(keras, x.shape[1], seed)
    model.compile(optimizer=keras.optimizers.Adam(), loss="mse")
    times: list[float] = []

    history = model.fit(
        x,
        y,
        batch_size=int(p["batch_size"]),
        epochs=int(p["epochs"]) + 1,
        verbose=0,
        callbacks=[epoch_timer(keras, times)],
    )
    return times, float(history.history["loss"][-1])


def run(ctx: WorkloadContext) -> list[dict[str, Any]]:
    tf = load_tensorflow()  # before keras, which imports TensorFlow less quietly
    import keras

    p = WORKLOAD.params(quick=ctx.quick, overrides=ctx.params)
    rng = ctx.rng(2)
    samples, features = int(p["samples"]), int(p["features"])
    x = rng.standard_normal((samples, features)).astype("float32")
    y = rng.standard_normal((samples, 1)).astype("float32")
    loops = (("gradient_tape", "tape"), ("fit", "fit"))
    results = []
    total = len(ctx.devices) * len(loops)
    done = 0
    for device in ctx.devices:
        with ctx.phase(f"{NAME} {device}"):
            for loop, short in loops:
                ctx.report(done / total, f"{device} {short}")
                done += 1
                results.append(_one_loop(ctx, tf, keras, device, loop, short, x, y, p))
    ctx.report(1.0, "done")
    return results


def _one_loop(
    ctx: WorkloadContext,
    tf: Any,
    keras: Any,
    device: str,
    loop: str,
    short: str,
    x: Any,
    y: Any,
    p: dict[str, Any],
) -> dict[str, Any]:
    """The result row of training with ``loop`` (``"fit"`` or ``"gradient_tape"``) on ``device``."""
    samples, features = x.shape
    batch = int(p["batch_size"])
    steps_per_epoch = -(-samples // batch)
    times: list[float] = []
    final_loss = None
    error = None
    with ctx.span() as span:
        reset_memory_peak(device)
        try:
            with on_device(device):
                if loop == "fit":
                    times, final_loss = _fit_epochs(keras, x, y, p, ctx.seed)
                else:
                    times, final_loss = _tape_epochs(tf, keras, x, y, p, ctx.seed)
        except tf_failures(tf) as err:
            error = failure_text(tf, err)
        mem = memory_info(device)
    seconds = median(times)
    return make_result(
        ctx,
        name=NAME,
        device=device,
        params={
            "loop": loop,
            "epochs": int(p["epochs"]),
            "batch_size": batch,
            "samples": int(samples),
            "features": int(features),
        },
        times=times,
        span=span,
        peak_tf_memory_bytes=mem["peak_bytes"] if mem else None,
        throughput=steps_per_epoch / seconds if seconds else None,
        throughput_unit="steps/s",
        details={
            "variant": short,
            "steps_per_epoch": steps_per_epoch,
            "step_seconds_median": seconds / steps_per_epoch if seconds else None,
            "epoch_seconds": times,
            "final_loss": final_loss,
        },
        error=error,
    )


WORKLOAD = Workload(
    name=NAME,
    description="Dense(10)/Dense(1) on 1000x100 random data, 5 epochs: GradientTape vs fit",
    run=run,
    quick_params={"samples": 1000, "features": 100, "batch_size": 32, "epochs": 5},
    full_params={"samples": 1000, "features": 100, "batch_size": 32, "epochs": 5},
)
