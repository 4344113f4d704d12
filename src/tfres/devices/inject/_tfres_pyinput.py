# ruff: noqa: UP004  (child-side: the style of sitecustomize.py, no tfres imports)
"""Input wait of custom loops fed from Python: the time spent producing the next batch in
Python between two calls of the loop's ``tf.function``.

    for x, y in batches():        # a Python generator, an iterator class, ds[i] ...
        loss = train_step(x, y)   # the hot tf.function

A generator's ``__next__`` cannot be wrapped from outside, but Python's profile hook sees
every resumption of a generator frame (a ``call`` event) and every ``yield`` (a ``return``
event), and every call of an ``__next__`` or ``__getitem__`` method. :class:`GapTimer` turns
the hook on only in the gap after one call of the hot function and off when the next call
starts, only on the main thread, only for a window of steps: the time from the outermost such
frame's ``call`` to its ``return`` is the input wait of the next step. Frames nested inside
it (a generator reading another) count once.

A gap that lasts longer than ``limit_seconds`` (the loop ended, and the program went on to
other work) turns the hook off from inside and is not measured.

It never displaces a profiler of the program's own (``sys.getprofile()`` set): then nothing
is measured, and the caller says so. Cost: one Python call per call/return event in the gap,
about a microsecond each here; the training step itself runs with the hook off.
"""

import sys
import time

#: inspect.CO_GENERATOR, without importing inspect at start-up
CO_GENERATOR = 0x20
#: methods that hand out the next batch of an iterator class or a sequence (PyDataset, ds[i])
INPUT_METHODS = ("__next__", "__getitem__")


class GapTimer:
    """Seconds spent in Python input code between :meth:`start` and :meth:`stop`."""

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._outer = None
        self._started = 0.0
        self._seconds = 0.0
        self._deadline = float("inf")
        self._expired = False
        #: True while this timer's hook is installed
        self.on = False
        #: False once a profiler of the program's own was found in place
        self.available = True

    def _hook(self, frame, event, arg):
        if self._clock() > self._deadline:  # not a gap between steps any more
            sys.setprofile(None)
            self.on, self._expired, self._outer = False, True, None
            return
        if event == "call":
            if self._outer is None:
                code = frame.f_code
                if code.co_flags & CO_GENERATOR or code.co_name in INPUT_METHODS:
                    self._outer = frame
                    self._started = self._clock()
        elif event == "return" and frame is self._outer:
            self._seconds += self._clock() - self._started
            self._outer = None

    def start(self, limit_seconds=float("inf")):
        """Start timing the gap (on the calling thread); False when another profiler is on."""
        self._seconds, self._outer, self._expired = 0.0, None, False
        self._deadline = self._clock() + limit_seconds
        if sys.getprofile() is not None:
            self.available = False
            return False
        sys.setprofile(self._hook)
        self.on = True
        return True

    def stop(self):
        """Stop timing; the input seconds of the gap, or None when it was not being timed (or
        it outlasted its limit)."""
        if not self.on:
            self._expired = False
            return None
        sys.setprofile(None)
        self.on = False
        if self._outer is not None:  # stopped inside the input code: count it up to now
            self._seconds += self._clock() - self._started
            self._outer = None
        return self._seconds
