"""The only code in tfres that touches hardware, the OS or TensorFlow's device APIs.

- :mod:`tfres.backends.host`: static facts about the host (CPU, memory, cgroups) via psutil
- :mod:`tfres.backends.proc`: live readings of the host and a process tree via psutil
- :mod:`tfres.backends.nvml`: NVIDIA GPUs via the official NVML bindings (``pynvml``)
- :mod:`tfres.backends.tf`: TensorFlow's ``tf.config`` and ``tf.sysconfig``, imported lazily
- :mod:`tfres.backends.blas`: BLAS/OpenMP thread pools via threadpoolctl
"""
