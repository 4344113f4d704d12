"""One worker of a two-worker MultiWorkerMirroredStrategy job, for tests/jobs/test_merge.py.

Run as ``tfres run --job J --worker N -- python tests/jobs/jobs_worker.py`` with ``TF_CONFIG`` set.
A custom training loop (Keras 3 ``fit`` is broken under this strategy upstream) on a tiny
two-layer model: each step gets a batch (``SLOW_INPUT_SECONDS`` of sleep in the input on
purpose), computes this worker's gradients with no collective inside, then applies them
through mean-aggregated variables (the all-reduce). :class:`tfres.jobs.merge.WorkerStepTimer`
records the three parts into ``$TFRES_STEPS_FILE``.
"""

from __future__ import annotations

import json
import os
import time

import tfres
from tfres.jobs.merge import WorkerStepTimer

choice = tfres.strategy()  # MultiWorkerMirroredStrategy from TF_CONFIG: before any tensor
strategy = choice.strategy

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

worker = json.loads(os.environ["TF_CONFIG"])["task"]["index"]
delay = float(os.environ.get("SLOW_INPUT_SECONDS", "0"))
steps = int(os.environ.get("STEPS", "15"))
rng = np.random.default_rng(worker)

with strategy.scope():
    mean = tf.VariableAggregation.MEAN
    w1 = tf.Variable(rng.standard_normal((32, 64)).astype("float32") * 0.1, aggregation=mean)
    w2 = tf.Variable(rng.standard_normal((64, 1)).astype("float32") * 0.1, aggregation=mean)
variables = [w1, w2]


def batches():
    while True:
        if delay:
            time.sleep(delay)  # the slowed worker's input pipeline
        x = rng.standard_normal((128, 32)).astype("float32")
        yield x, x[:, :1] * 2.0


@tf.function
def local_gradients(x, y):
    def fn(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((tf.nn.relu(x @ w1) @ w2 - y) ** 2)
        return tape.gradient(loss, variables), loss

    return strategy.run(fn, args=(x, y))


@tf.function
def apply_gradients(grads):
    def fn(grads):
        for v, g in zip(variables, grads, strict=True):
            v.assign_sub(0.01 * g)  # MEAN aggregation: the all-reduce across workers

    strategy.run(fn, args=(grads,))
    return tf.reduce_sum(w2)


timer = WorkerStepTimer()
data = batches()
for _ in range(steps):
    with timer.step(epoch=0) as s:
        x, y = next(data)
        s.input_done()
        grads, loss = local_gradients(x, y)
        float(loss)
        s.compute_done()
        float(apply_gradients(grads))
timer.close()
print(json.dumps({"worker": worker, "steps": len(timer.steps), "kind": choice.kind}))
