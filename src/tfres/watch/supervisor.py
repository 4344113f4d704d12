"""The supervisor side of ``tfres run``: signals, the stop ladder, and how a run ended.

The command leads a process group of its own, so a signal tfres passes on reaches its whole
tree (shell children, ``multiprocessing`` workers). What tfres promises (docs/reliability.md):

- SIGTERM, SIGHUP and SIGINT sent to tfres go to the command's whole process group, and
  the grace starts: a tree still there ``grace_seconds`` later gets SIGKILL;
- a second such signal sends SIGKILL at once;
- where tfres holds the terminal, the command's group gets the terminal's foreground, as a
  shell gives it to a job: Ctrl-C reaches the whole tree once, from the terminal itself;
- a watcher's stop (the memory budget) goes through the same ladder;
- processes the command leaves in its group when it exits are stopped the same way;
- the record says what happened, in words (:func:`describe_end`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from types import FrameType

from tfres.backends.memlimit import host_oom_kills
from tfres.backends.signals import StopLadder, Terminal, stop_self, stopped
from tfres.record import Record

__all__ = ["FORWARDED_SIGNALS", "Supervisor", "describe_end", "signal_name"]

#: signals sent to tfres that are passed on to the command's process group
FORWARDED_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class Supervisor:
    """The state of one watched command, shared by the main loop, watchers and signal handlers.

    A signal that comes before the command has started is held and passed on once it has.
    ``clock`` drives the grace (tests pass a fake clock).
    """

    def __init__(
        self, grace_seconds: float, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.grace_seconds = grace_seconds
        self._clock = clock
        self.proc: subprocess.Popen[bytes] | None = None
        self.ladder: StopLadder | None = None
        self.terminal = Terminal()
        self.has_terminal = False
        self._pending: list[int] = []
        self.wake = threading.Event()
        self.stop_reason: str | None = None
        #: what tfres received, in words, in order
        self.received: list[str] = []
        self.left_behind = False
        self._closed = False
        self._asked_at: float | None = None
        self._oom_kills_at_start: int | None = None
        #: drives the grace once a stop is under way (see _escalate_when_due)
        self._grace_thread: threading.Thread | None = None
        self._grace_lock = threading.RLock()  # RLock: a signal handler may come in between
        self._ended = threading.Event()

    # -- signals -----------------------------------------------------------------------------
    def on_signal(self, signum: int, frame: FrameType | None) -> None:
        name = signal_name(signum)
        if self.ladder is None:
            self.received.append(f"{name} (passed on to the command)")
            self._pending.append(signum)
            return
        if self.received or self.ladder.started:
            self.received.append(f"{name} again (SIGKILL to the command at once)")
            self.ladder.kill()
        else:
            self.received.append(f"{name} (passed on to the command)")
            self.ladder.terminate(signum)
        self._escalate_when_due()
        self.wake.set()

    def attach(self, proc: subprocess.Popen[bytes]) -> None:
        """The command has started (leading its own group): hand it the terminal if we hold
        it, and pass on what came while it was starting."""
        self.proc = proc
        self._oom_kills_at_start = host_oom_kills()
        self.ladder = StopLadder(proc.pid, grace_seconds=self.grace_seconds, clock=self._clock)
        self.has_terminal = self.terminal.give(proc.pid)
        for i, signum in enumerate(self._pending):
            if i == 0:
                self.ladder.terminate(signum)
            else:
                self.ladder.kill()
        if self._pending:
            self._escalate_when_due()
        self._pending.clear()
        self.wake.set()

    # -- stopping ----------------------------------------------------------------------------
    def request_stop(self, reason: str, *, ask: int | None = None) -> None:
        """A watcher asks to stop the command: SIGTERM to the tree now (the ladder goes on
        from there); or, with ``ask`` (SIGUSR1: "checkpoint and stop"), that signal to the
        command alone, and SIGTERM only if it is still running ``grace_seconds`` later."""
        if self.stop_reason is None:
            self.stop_reason = reason
        if self.ladder is not None:
            if ask is not None and self._asked_at is None and not self.ladder.started:
                self._asked_at = self._clock()
                self.ladder.send_leader(ask)
            elif ask is None:
                self.ladder.terminate()
            self._escalate_when_due()
        self.wake.set()

    def _escalate_when_due(self) -> None:
        """Start the thread that sends the next step of the ladder when it is due (once)."""
        with self._grace_lock:
            if self._grace_thread is not None or self._ended.is_set():
                return
            self._grace_thread = threading.Thread(
                target=self._grace_loop, name="tfres-grace", daemon=True
            )
            self._grace_thread.start()

    def _next_step_at(self) -> float | None:
        """When the next step is due on the clock: SIGTERM after an unanswered request,
        SIGKILL after SIGTERM; None when there is none left."""
        ladder = self.ladder
        if ladder is None or ladder.killed:
            return None
        if ladder.terminated_at is not None:
            return ladder.terminated_at + self.grace_seconds
        if self._asked_at is not None:
            return self._asked_at + self.grace_seconds
        return None

    def _grace_loop(self) -> None:
        assert self.proc is not None
        while self.proc.poll() is None:
            due = self._next_step_at()
            if due is None or self._ended.wait(max(0.0, due - self._clock())):
                return
            self.poll()

    def poll(self) -> None:
        """Escalate when due: SIGTERM after an unanswered request, SIGKILL after the grace."""
        if self.ladder is None or self.proc is None or self.proc.poll() is not None:
            return
        asked = self._asked_at
        if asked is not None and self._clock() - asked >= self.grace_seconds:
            self.ladder.terminate()
        self.ladder.poll()

    def wait(self, tick: float = 0.5, refresh: Callable[[], None] | None = None) -> int:
        """Wait for the command; returns its returncode.

        With ``refresh`` (the live dashboard) the loop wakes every ``tick`` s to redraw.
        Without it nothing wakes periodically: the main thread sleeps in ``waitid`` until the
        command exits or (holding the terminal) stops; a signal runs its handler in between
        (Python retries the wait), and the grace is driven by a thread of its own
        (:meth:`_escalate_when_due`), started once a stop is under way.
        """
        assert self.proc is not None
        if refresh is None and hasattr(os, "waitid"):
            self._block_until_exit()
        while self.proc.poll() is None:
            self.wake.wait(tick)
            self.wake.clear()
            self.poll()
            self._follow_job_control()
            if refresh is not None:
                refresh()
        return self.proc.wait()

    def _block_until_exit(self) -> None:
        """Sleep in ``waitid`` (not reaping: ``Popen`` does that) until the command exits."""
        assert self.proc is not None
        while True:
            flags = os.WEXITED | os.WNOWAIT | (os.WSTOPPED if self.has_terminal else 0)
            try:
                info = os.waitid(os.P_PID, self.proc.pid, flags)
            except ChildProcessError:  # reaped already (another thread's Popen.poll)
                return
            if info is None or info.si_code != os.CLD_STOPPED:
                return
            self._follow_job_control()
            if self.has_terminal and stopped(self.proc.pid):
                return  # still stopped after all: fall back to the polling loop

    def _follow_job_control(self) -> None:
        """Ctrl-Z stopped the command (it holds the terminal): stop tfres too, so the shell
        sees its job stopped; on ``fg``, give the terminal back and continue the command."""
        assert self.proc is not None and self.ladder is not None
        if not self.has_terminal or not stopped(self.proc.pid):
            return
        self.terminal.take_back()
        stop_self()  # until the shell's fg/bg sends SIGCONT
        self.has_terminal = self.terminal.give(self.proc.pid)
        self.ladder.send(signal.SIGCONT)

    def abandon(self) -> int:
        """tfres itself is going down (an internal error): end the tree, then its returncode."""
        assert self.proc is not None and self.ladder is not None
        if self.proc.poll() is None:
            self.ladder.terminate()
            try:
                self.proc.wait(timeout=self.grace_seconds)
            except subprocess.TimeoutExpired:
                self.ladder.kill()
        if not self.received:
            self.received.append("an internal error")
        return self.proc.wait()

    def oom_kills_during_run(self) -> int | None:
        """How many processes the kernel's OOM killer ended while the command ran (host-wide)."""
        now = host_oom_kills()
        if now is None or self._oom_kills_at_start is None:
            return None
        return now - self._oom_kills_at_start

    def close(self) -> None:
        """After the command exited: stop what it left in its group; take the terminal back."""
        if self._closed:
            return
        self._closed = True
        self._ended.set()
        if self.ladder is not None:
            self.left_behind = self.ladder.finish_group()
        self.terminal.take_back()


def describe_end(record: Record, sup: Supervisor, returncode: int) -> None:
    """Set the record's status, exit code or signal and ``end_reason`` from how it ended.

    ``"ok"``: exit 0. ``"failed"``: a non-zero exit status. ``"partial"``: stopped by tfres,
    interrupted by a signal tfres passed on, or killed by a signal.
    """
    if returncode < 0:
        record.exit_code = None
        record.signal = signal_name(-returncode)
    else:
        record.exit_code = returncode
    killed = sup.ladder is not None and sup.ladder.killed
    how = (
        f"the command was ended by {record.signal}"
        if record.signal
        else (f"the command exited with status {returncode}")
    )
    if sup.stop_reason is not None:
        record.status = "partial"
        record.end_reason = f"stopped by tfres: {sup.stop_reason}"
        if killed:
            record.end_reason += f" (SIGKILL after {sup.grace_seconds:g} s)"
    elif sup.received:
        record.status = "partial"
        record.end_reason = f"interrupted: tfres received {'; then '.join(sup.received)}; {how}"
        if killed and "again" not in record.end_reason:
            record.end_reason += f" (SIGKILL after the {sup.grace_seconds:g} s grace)"
    elif returncode < 0:
        record.status = "partial"
        record.end_reason = how
        if record.signal == "SIGINT" and sup.has_terminal:
            record.end_reason += " (Ctrl-C at the terminal, or a signal sent to the command)"
    elif returncode > 0:
        record.status = "failed"
        record.end_reason = how
    else:
        record.status = "ok"
    if record.signal == "SIGKILL" and not killed:
        # the evidence the out_of_memory rule needs before it says "out of memory"
        record.extra["oom_kills_during_run"] = sup.oom_kills_during_run()
    if sup.left_behind:
        record.notes.append(
            "the command left processes in its process group; tfres stopped them "
            f"(SIGTERM, SIGKILL after {sup.grace_seconds:g} s)"
        )
