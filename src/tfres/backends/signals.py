"""Signals to process trees and groups, the terminal's foreground, and the one kill ladder.

``tfres run`` starts a command as the leader of a process group of its own
(:func:`new_group_options`), so that a signal reaches the whole tree the command starts,
``multiprocessing`` workers and shell children included; :class:`StopLadder` is how both
``tfres run`` and the memory budget stop a tree (SIGTERM, then SIGKILL after a grace);
:class:`Terminal` gives the command the terminal's foreground as a shell does for a job.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import psutil

__all__ = [
    "DEFAULT_GRACE_SECONDS",
    "StopLadder",
    "Terminal",
    "group_alive",
    "group_members",
    "new_group_options",
    "raise_in_main_thread",
    "signal_tree",
    "stop_self",
    "stopped",
]

log = logging.getLogger("tfres")


# -- stopping a process tree: the one kill ladder ---------------------------------------
#: how long a process tree asked to stop (SIGTERM) has before SIGKILL, by default
DEFAULT_GRACE_SECONDS = 10.0


def _descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


def signal_tree(pid: int, sig: int, *, group: bool = False) -> None:
    """Send ``sig`` once to ``pid``, all its descendants and (``group=True``) its process group.

    The descendants are listed before anything is sent (a parent that dies first would
    leave its children to PID 1, out of sight). With ``group=True``, ``pid`` leads a process
    group of its own (see :func:`new_group_options`): one ``killpg`` reaches its members, and
    members that have left the tree; descendants that left the group (a new session) get it
    one by one. Gone processes are skipped.
    """
    kids = _descendants(pid)
    procs = [*kids, _process(pid)]
    if group:
        try:
            os.killpg(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        procs = [p for p in procs if p is not None and _pgid(p.pid) not in (pid, None)]
    for proc in procs:
        if proc is None:
            continue
        try:
            proc.send_signal(sig)
        except psutil.Error:
            pass


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None


def _process(pid: int) -> psutil.Process | None:
    try:
        return psutil.Process(pid)
    except psutil.Error:
        return None


def group_alive(pgid: int) -> bool:
    """Whether a live (not zombie) process of process group ``pgid`` is left."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return bool(group_members(pgid))


def group_members(pgid: int) -> list[int]:
    """The pids of the live (not zombie) processes of process group ``pgid``."""
    members = []
    for pid in psutil.pids():
        try:
            if os.getpgid(pid) != pgid:
                continue
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                continue
        except (OSError, psutil.Error):
            continue
        members.append(pid)
    return members


def new_group_options() -> dict[str, object]:
    """``subprocess.Popen`` keywords that start the child as the leader of a new process group.

    The child keeps our session, so it can still use the terminal (see :class:`Terminal`).
    """
    return {"process_group": 0}


class StopLadder:
    """Stop a process tree: SIGTERM to all of it, then SIGKILL ``grace_seconds`` later.

    ``pid`` leads a process group of its own (``group=True``, the way ``tfres run`` starts a
    command) or is any process (``group=False``: it and its descendants). :meth:`terminate`
    sends SIGTERM once; :meth:`poll` sends SIGKILL when the grace has passed; :meth:`kill`
    sends SIGKILL at once (a second Ctrl-C, a tree at its memory ceiling). Safe to call from
    a watchdog thread, the main loop and a signal handler alike. ``clock`` is injectable.

        ladder = StopLadder(proc.pid, grace_seconds=10)
        ladder.terminate()
        while proc.poll() is None:
            ladder.poll(); time.sleep(0.1)
    """

    def __init__(
        self,
        pid: int,
        *,
        grace_seconds: float = DEFAULT_GRACE_SECONDS,
        group: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not grace_seconds >= 0:
            raise ValueError(f"grace_seconds must be >= 0 (got {grace_seconds!r})")
        self.pid = int(pid)
        self.grace_seconds = float(grace_seconds)
        self.group = group
        self._clock = clock
        self._lock = threading.RLock()
        #: clock time of the SIGTERM (None before), and whether SIGKILL was sent
        self.terminated_at: float | None = None
        self.killed = False

    @property
    def started(self) -> bool:
        return self.terminated_at is not None or self.killed

    def send(self, sig: int) -> None:
        """Send ``sig`` to the whole tree (and group), outside the ladder's own steps."""
        signal_tree(self.pid, sig, group=self.group)

    def send_leader(self, sig: int) -> None:
        """Send ``sig`` to ``pid`` alone (a request such as SIGUSR1, not meant for workers)."""
        try:
            os.kill(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def terminate(self, sig: int = signal.SIGTERM) -> bool:
        """``sig`` (SIGTERM) to the whole tree and the grace starts, the first time only.

        True when it was sent now; later calls send nothing (see :meth:`send`).
        """
        with self._lock:
            if self.terminated_at is not None or self.killed:
                return False
            self.terminated_at = self._clock()
        self.send(sig)
        return True

    def kill(self) -> bool:
        """SIGKILL to the whole tree now (also sent again if asked again); True if the first."""
        with self._lock:
            first = not self.killed
            self.killed = True
            if self.terminated_at is None:
                self.terminated_at = self._clock()
        self.send(signal.SIGKILL)
        return first

    def poll(self) -> bool:
        """SIGKILL once the grace after SIGTERM has passed; True when it was sent now."""
        with self._lock:
            due = (
                self.terminated_at is not None
                and not self.killed
                and self._clock() - self.terminated_at >= self.grace_seconds
            )
        return self.kill() if due else False

    def finish_group(self, *, wait: Callable[[float], object] = time.sleep) -> bool:
        """After the leader has exited: end what is left of its group the same way.

        Returns True when members were left (processes that would outlive the command).
        ``wait(seconds)`` pauses between checks (tests pass one that moves a fake clock).
        """
        if not self.group or not group_alive(self.pid):
            return False
        if not self.terminate():
            self.send(signal.SIGTERM)
        while group_alive(self.pid) and not self.killed:
            wait(0.05)
            self.poll()
        return True


# -- the terminal -------------------------------------------------------------------------
class Terminal:
    """Hand the terminal's foreground to a child's process group and take it back.

    A shell does this for every job: a command in the foreground group can read the
    terminal, and the terminal's Ctrl-C (SIGINT), Ctrl-\\ (SIGQUIT) and Ctrl-Z reach its
    whole group, once. :meth:`ours` is None when we are not the terminal's foreground
    (in the background, under a pipe with no terminal, under a batch system).
    """

    def __init__(self) -> None:
        self.fd = self.ours()
        self._given = False
        self._ttou: Any = None

    @staticmethod
    def ours() -> int | None:
        """The fd of our controlling terminal when our process group is its foreground."""
        for fd in (0, 1, 2):
            try:
                if os.isatty(fd) and os.tcgetpgrp(fd) == os.getpgrp():
                    return fd
            except OSError:
                continue
        return None

    def give(self, pgid: int) -> bool:
        """Make ``pgid`` the foreground group; False when we do not hold the terminal.

        From then on we are a background group: SIGTTOU is ignored (in the main thread), so
        that writing to the terminal and taking it back never stops us.
        """
        if self.fd is None or self.ours() != self.fd:  # not (or no longer) the foreground
            return False
        try:
            os.tcsetpgrp(self.fd, pgid)
        except OSError as err:
            log.debug("could not hand the terminal to group %s: %s", pgid, err)
            return False
        self._given = True
        if threading.current_thread() is threading.main_thread():
            self._ttou = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
        return True

    def take_back(self) -> None:
        """Make our group the foreground again (SIGTTOU blocked: we ask from the background)."""
        if not self._given or self.fd is None:
            return
        self._given = False
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTTOU})
        try:
            os.tcsetpgrp(self.fd, os.getpgrp())
        except OSError as err:
            log.debug("could not take the terminal back: %s", err)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
            if self._ttou is not None:
                signal.signal(signal.SIGTTOU, self._ttou)
                self._ttou = None


def stopped(pid: int) -> bool:
    """Whether ``pid`` is stopped (Ctrl-Z, SIGSTOP), from ``/proc/PID/stat``."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_STOPPED
    except psutil.Error:
        return False


def stop_self() -> None:
    """Stop this process until a SIGCONT (the shell's ``fg`` or ``bg``)."""
    os.kill(os.getpid(), signal.SIGSTOP)


# -- raising in the main thread ------------------------------------------------------------
def raise_in_main_thread(error: type[BaseException]) -> bool:
    """Make the main thread raise ``error`` at its next bytecode; False where not possible.

    CPython's ``PyThreadState_SetAsyncExc`` (like Ctrl-C's KeyboardInterrupt, it arrives
    between two bytecodes, so a long C call finishes first); elsewhere, Ctrl-C's own.
    """
    import ctypes

    main = threading.main_thread().ident
    try:
        set_async = ctypes.pythonapi.PyThreadState_SetAsyncExc
    except AttributeError:  # not CPython: the best we have is Ctrl-C
        import _thread

        _thread.interrupt_main()
        return True
    done = set_async(ctypes.c_ulong(main or 0), ctypes.py_object(error))
    return bool(done == 1)
