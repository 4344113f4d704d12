# ruff: noqa: UP004  (child-side: the style of sitecustomize.py, no tfres imports)
"""SIGALRM as the clock of the custom loops' gap sampler (:mod:`_tfres_pyinput`): a timer
armed for each timed gap only, whose handler Python runs on the loop's own thread, with the
frame it is in. No GIL changes hands for a sample, so a loader that releases the GIL every
few microseconds cannot keep the samples out, as it does a sampling thread's (the GIL
convoy). Used only where the program leaves SIGALRM free; the thread samples elsewhere."""

import atexit
import signal
import threading

_MAIN = threading.main_thread()
#: the signal module's functions as the program found them: the sampler's own calls use
#: these, the program's go through the wrappers of Alarm._guard_signal_module
_SIGNAL = {"signal": signal.signal, "setitimer": signal.setitimer}


class Alarm:
    """SIGALRM for the process's gap samplers (the child has one): one handler, set at the
    first gap sampled by the timer and left in place, since a tick sent just before the
    timer stopped may still be on its way, and the default action would end the process (a
    first version that put it back at once was killed so). A program that takes SIGALRM
    for itself afterwards (``signal.alarm``, ``signal.setitimer(ITIMER_REAL)``,
    ``signal.signal(SIGALRM)``) first gets the default action back, and the samplers use
    their thread from then on."""

    def __init__(self):
        self.sampler = None  # the GapSampler whose gap the timer runs for
        self.installed = False  # our handler is in place
        self.taken = False  # the program took SIGALRM for itself

    def free(self):
        """Whether a gap can be sampled by SIGALRM: the calling thread is the main one (the
        only one Python runs handlers on), and the program has neither a handler of its own
        for SIGALRM nor a real-time timer armed (pytest-timeout has both)."""
        if self.taken or not hasattr(signal, "setitimer"):
            return False
        if threading.current_thread() is not _MAIN:
            return False
        try:
            handler = signal.getsignal(signal.SIGALRM)
            timer = signal.getitimer(signal.ITIMER_REAL)
        except (ValueError, OSError):
            return False
        return handler in (signal.SIG_DFL, self.handle) and not any(timer)

    def arm(self, sampler, every):
        """Tick every ``every`` seconds for ``sampler``'s gap; False where SIGALRM is taken."""
        if not self.free():
            return False
        try:
            if not self.installed:
                _SIGNAL["signal"](signal.SIGALRM, self.handle)
                signal.siginterrupt(signal.SIGALRM, False)  # system calls go on (SA_RESTART)
                self.installed = True
                self._guard_signal_module()
                # a gap still open at exit (the loop ended, other work followed): Python
                # puts the default action back as it shuts down, and a tick would end it
                atexit.register(self.disarm)
            self.sampler = sampler
            _SIGNAL["setitimer"](signal.ITIMER_REAL, every, every)
        except (ValueError, OSError):
            self.sampler = None
            return False
        return True

    def disarm(self, sampler=None):
        """Stop the timer (if it runs for ``sampler``'s gap); the handler stays."""
        if self.sampler is not None and sampler in (None, self.sampler):
            _SIGNAL["setitimer"](signal.ITIMER_REAL, 0)
            self.sampler = None

    def handle(self, signum, frame):
        """SIGALRM's handler, run by Python on the main thread between two bytecodes, with
        the frame it is in; a late tick, with no gap to sample, does nothing."""
        sampler = self.sampler
        if sampler is not None:
            sampler._on_alarm(frame)

    def give_back(self):
        """The program takes SIGALRM: stop our timer, put the default action back."""
        self.taken = True
        self.disarm()
        if self.installed:
            self.installed = False
            if signal.getsignal(signal.SIGALRM) == self.handle:
                _SIGNAL["signal"](signal.SIGALRM, signal.SIG_DFL)

    def _guard_signal_module(self):
        """Wrap the signal module's ways to take SIGALRM so that each gives it back first."""
        alarm_, give_back = signal.alarm, self.give_back

        def alarm(seconds):
            give_back()
            return alarm_(seconds)

        def setitimer(which, seconds, interval=0.0):
            if which == signal.ITIMER_REAL:
                give_back()
            return _SIGNAL["setitimer"](which, seconds, interval)

        def signal_(signalnum, handler):
            if signalnum == signal.SIGALRM:
                give_back()
            return _SIGNAL["signal"](signalnum, handler)

        alarm.__doc__, setitimer.__doc__ = alarm_.__doc__, signal.setitimer.__doc__
        signal_.__doc__, signal_.__name__ = signal.signal.__doc__, "signal"
        signal.alarm, signal.setitimer, signal.signal = alarm, setitimer, signal_


#: the process's one
ALARM = Alarm()
