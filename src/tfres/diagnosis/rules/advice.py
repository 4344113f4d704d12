"""The fixes that depend on the program's framework, in its own words.

A rule that advises code changes looks its words up here by :attr:`RunFacts.framework`:
``"tensorflow"`` (the default, and what tfres instruments), or ``"pytorch"``/``"jax"`` for a
program the start-up hook saw run on that framework without TensorFlow. A PyTorch user told
to add ``@tf.function`` learns nothing; each entry says the same thing in that framework.
"""

from __future__ import annotations

__all__ = ["IDLE_TEXT", "COPY_FIX", "UNDERUSED_FIX", "CPU_BOUND_FIX", "SINGLE_CORE_TEXT"]

#: per framework (:attr:`RunFacts.framework`): why a GPU sat idle, and how to check
IDLE_TEXT = {
    "tensorflow": (
        "the model ran on the CPU (ops pinned with tf.device('/CPU:0'), NumPy/scikit-learn "
        "work, or a CPU-only TensorFlow in the child's environment)",
        "print(tf.config.list_physical_devices('GPU')); "
        "tf.debugging.set_log_device_placement(True)",
    ),
    "pytorch": (
        "the model ran on the CPU (the model or its batches never moved with .to('cuda'), "
        "NumPy work, or a CPU-only PyTorch build)",
        "print(torch.cuda.is_available(), next(model.parameters()).device); move the model "
        "and each batch: model.to('cuda'), x.to('cuda', non_blocking=True)",
    ),
    "jax": (
        "the work ran on the CPU (a CPU-only jaxlib, or arrays placed on the CPU)",
        "print(jax.devices()); pip install -U 'jax[cuda12]'",
    ),
}
#: per framework: how to keep copies off the step's path
COPY_FIX = {
    "tensorflow": (
        "keep the data on the GPU between steps and prefetch to it: dataset.apply("
        "tf.data.experimental.prefetch_to_device('/GPU:0')); copy less per step (uint8 "
        "images, cast on the GPU)"
    ),
    "pytorch": (
        "copy from pinned memory, overlapped with compute: DataLoader(..., pin_memory=True) and "
        "x.to('cuda', non_blocking=True); keep reused tensors on the GPU; copy uint8 and "
        "convert on the GPU"
    ),
    "jax": (
        "put the next batch on the device while this one runs (jax.device_put ahead of the "
        "step); keep reused arrays on the device"
    ),
}
#: per framework: how to give each step more GPU work
UNDERUSED_FIX = {
    "tensorflow": (
        "raise the batch size (tfres batch-size script.py:build_model), run several steps "
        "per call: model.compile(..., steps_per_execution=32, jit_compile=True), and prefetch"
    ),
    "pytorch": (
        "raise the batch size; feed the GPU from worker processes: DataLoader(..., "
        "num_workers=4, pin_memory=True) and x.to('cuda', non_blocking=True); fewer, larger "
        "kernels: torch.compile(model)"
    ),
    "jax": (
        "raise the batch size; jit the whole step (jax.jit) and put the next batch on the "
        "device while this one runs (jax.device_put)"
    ),
}

#: per framework (:attr:`RunFacts.framework`): how to cut CPU-bound work
CPU_BOUND_FIX = {
    "tensorflow": (
        "move the work to a GPU (pip install 'tensorflow[and-cuda]'), or cut it: "
        "mixed precision keras.mixed_precision.set_global_policy('mixed_bfloat16'), "
        "XLA model.compile(..., jit_compile=True), a smaller model"
    ),
    "pytorch": (
        "move the work to a GPU (model.to('cuda'); torch.cuda.is_available() says whether "
        "this PyTorch can), or cut it: torch.autocast('cpu', dtype=torch.bfloat16), "
        "torch.compile(model), a smaller model"
    ),
    "jax": (
        "move the work to a GPU (pip install -U 'jax[cuda12]'), or cut it: jax.jit the whole "
        "step, bfloat16 parameters, a smaller model"
    ),
}
#: per framework: why one core is pegged, and what spreads or removes that work
SINGLE_CORE_TEXT = {
    "tensorflow": (
        "a single thread does the work: Python code holding the GIL (a Python loop, "
        "a py_function or generator in the input pipeline, per-step Python overhead)",
        "run the step as a graph: @tf.function (or model.compile(..., "
        "steps_per_execution=32)); move Python preprocessing into "
        "dataset.map(fn, num_parallel_calls=tf.data.AUTOTUNE)",
    ),
    "pytorch": (
        "a single thread does the work: Python code holding the GIL (a Python loop, "
        "preprocessing in the main process, per-step Python overhead, or a busy wait in "
        "torch.cuda.synchronize)",
        "move preprocessing into DataLoader(..., num_workers=4) workers; fewer Python calls "
        "per step: torch.compile(model), larger batches; synchronize only when a value is "
        "needed",
    ),
    "jax": (
        "a single thread does the work: Python code holding the GIL (a Python loop, "
        "preprocessing in the main thread, per-step Python overhead)",
        "jax.jit the whole step; prepare batches in background workers (grain, tf.data or "
        "a thread) and jax.device_put them ahead",
    ),
}
