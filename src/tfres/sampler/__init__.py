"""The timeline: a 10 Hz sampler of the host, a process tree, GPUs and TensorFlow's allocator.

:mod:`.sampler` runs the loop, :mod:`.gpu_poll` reads GPUs on a thread of their own,
:mod:`.retention` keeps long runs in bounded memory, :mod:`.columns` flattens a sample into
unit-named columns.
"""

from tfres.sampler.sampler import DEFAULT_INTERVAL_SECONDS, Sampler

__all__ = ["DEFAULT_INTERVAL_SECONDS", "Sampler"]
