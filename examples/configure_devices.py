"""Configure TensorFlow's devices in one safe call, before anything starts its runtime.

On a GPU machine this turns on memory growth (so TensorFlow does not grab all GPU memory);
on a CPU-only one it says the GPU settings were skipped. Calling it after a model exists
raises TooLateError with the fix.

    python examples/configure_devices.py
"""

from __future__ import annotations

import tfres


def main() -> None:
    applied = tfres.configure(gpu_memory_growth=True, intra_op_threads=2, logical_cpus=2)
    for line in applied.lines():
        print(line)

    import tensorflow as tf

    print("logical devices:", [d.name for d in tf.config.list_logical_devices()])
    try:
        tfres.configure(intra_op_threads=1)  # too late: the runtime has started
    except tfres.TooLateError as err:
        print(f"as expected: {err}")


if __name__ == "__main__":
    main()
