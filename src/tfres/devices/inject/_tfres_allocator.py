# ruff: noqa: UP004, UP031  (child-side: the style of sitecustomize.py, no tfres imports)
"""TensorFlow's allocator, read from inside a ``tfres run`` child (no tfres needed).

The parent cannot ask another process's TensorFlow what its allocator holds; this module,
started by :mod:`_tfres_instrument` once the program has imported TensorFlow, asks from
inside and writes what it reads to ``$TFRES_EVENTS_FILE`` as JSON lines::

    {"event": "allocator", "pid": 4242, "t_monotonic": 1234.5,
     "devices": {"GPU:0": {"current_bytes": 7340032, "peak_bytes": 9437184}}}

- A daemon thread looks once a second (:data:`PERIOD_SECONDS`). It reads nothing until the
  program itself has started TensorFlow's runtime (building a model or making a tensor
  starts it); it never starts it and never imports TensorFlow, so a device setting the
  program makes later still works.
- Each logical device is read with ``tf.config.experimental.get_memory_info`` (current and
  peak bytes in use, about 1.5 us); a line is written only when a figure changed, and once
  more at exit (the final peak).
- A device TensorFlow keeps no statistics for (``CPU:0`` where oneDNN is off: ValueError)
  is left out, with a ``note`` event saying why, once. Any other failure becomes a note
  too and stops the readings; the program always runs on.
"""

import atexit
import os
import sys
import threading
import time

#: how often the thread looks: the allocator's figures change by the step, the parent
#: samples at ~10 Hz and holds the last reading between two
PERIOD_SECONDS = 1.0
_clock = time.monotonic


def _module(name):
    """``sys.modules[name]`` once it has finished importing (a half-imported one: None)."""
    module = sys.modules.get(name)
    if module is None or getattr(getattr(module, "__spec__", None), "_initializing", False):
        return None
    return module


def runtime_started():
    """Whether the program has started TensorFlow's runtime (never starts it)."""
    if _module("tensorflow") is None:
        return False
    context = _module("tensorflow.python.eager.context")
    if context is None:
        return False
    get = getattr(context, "context_safe", None) or context.context
    ctx = get()
    if ctx is None:
        return False
    initialized = getattr(ctx, "_initialized", None)
    if isinstance(initialized, bool):
        return initialized
    return getattr(ctx, "_context_handle", None) is not None


def _onednn_words():
    util = _module("tensorflow.python.util._pywrap_util_port")
    try:
        on = bool(util.IsMklEnabled()) if util is not None else None
    except Exception:
        on = None
    asked = os.environ.get("TF_ENABLE_ONEDNN_OPTS")
    why = "TF_ENABLE_ONEDNN_OPTS=%s" % asked if asked is not None else "TensorFlow's default"
    if on is None:
        return "they need oneDNN, on or off not known here; %s" % why
    return "they need oneDNN, which is %s (%s)" % ("on" if on else "off", why)


class AllocatorReader(object):
    """Reads every logical device's allocator and writes changed readings as events.

    ``instrument`` is :class:`_tfres_instrument.Instrument` (its ``events`` writer and
    ``note``); ``tf`` the imported ``tensorflow`` module, looked up when None.
    """

    def __init__(self, instrument, tf=None):
        self.instrument = instrument
        self._tf = tf
        self.devices = None  # ["GPU:0", "CPU:0"] once the runtime is up
        self.last = None  # the devices' figures last written
        self.stopped = False
        self._lock = threading.Lock()
        #: set at exit: wakes the thread's wait so that it ends at once
        self.wake = threading.Event()

    def _ready(self):
        if self.devices is not None:
            return True
        if not runtime_started():
            return False
        tf = self._tf or sys.modules["tensorflow"]
        self._tf = tf
        names = [d.name for d in tf.config.list_logical_devices()]
        self.devices = [n.replace("/device:", "").replace("/physical_device:", "") for n in names]
        return True

    def read(self):
        """``{device: {"current_bytes", "peak_bytes"}}``, or None before the runtime is up."""
        if not self._ready():
            return None
        get = self._tf.config.experimental.get_memory_info
        out = {}
        for name in list(self.devices):
            try:
                info = get(name)
            except Exception as err:  # no statistics for this device: stop asking
                self.devices.remove(name)
                self._unavailable(name, err)
                continue
            out[name] = {"current_bytes": int(info["current"]), "peak_bytes": int(info["peak"])}
        return out

    def _unavailable(self, name, err):
        why = _onednn_words() if name.startswith("CPU") else "%s: %s" % (type(err).__name__, err)
        self.instrument.note(
            "TensorFlow keeps no allocator statistics for %s on this build/CPU (%s): "
            "not available in this record" % (name, why)
        )

    def poll(self, final=False):
        """Read once; write the reading if it changed (always when ``final``)."""
        with self._lock:
            if self.stopped:
                return
            try:
                reading = self.read()
            except Exception as err:
                self.stopped = True
                self.instrument.note(
                    "TensorFlow allocator readings stopped (%s: %s); the program ran on "
                    "unchanged" % (type(err).__name__, err)
                )
                return
            if reading is None or not reading or (reading == self.last and not final):
                return
            self.last = reading
            self.instrument.events.write(
                {
                    "event": "allocator",
                    "pid": os.getpid(),
                    "t_monotonic": round(_clock(), 6),
                    "devices": reading,
                }
            )

    def run(self, period=PERIOD_SECONDS):
        """The daemon thread's loop: poll every ``period`` seconds until stopped or woken."""
        while not self.stopped and not self.wake.wait(period):
            self.poll()
            if self.devices == []:  # every device said it keeps no statistics: done
                return


#: how long the exit waits for the thread's current reading to end
JOIN_SECONDS = 5.0


def start(instrument, tf=None):
    """Start the daemon thread and the reading at exit; returns the reader."""
    reader = AllocatorReader(instrument, tf)
    thread = threading.Thread(target=reader.run, name="tfres-allocator", daemon=True)
    thread.start()
    atexit.register(_at_exit, reader, thread)
    return reader


def _at_exit(reader, thread):
    # the thread ends before the interpreter shuts down: a daemon thread still inside a
    # TensorFlow call at shutdown hung the exit of a fit stopped by SIGUSR1 (1 run in 3)
    reader.wake.set()
    thread.join(JOIN_SECONDS)
    reader.poll(final=True)
    reader.stopped = True
