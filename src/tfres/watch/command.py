"""Run a command under watch: what ``tfres run -- COMMAND ...`` calls.

    result = watch(["python", "train.py"], label="exp1")
    result.exit_status      # the command's own exit status (128 + N when killed by signal N)
    result.record           # the timeline of the command's whole process tree, saved

The command runs as a child in tfres's own process group, so the terminal's Ctrl-C reaches
it directly (tfres waits and records it); SIGTERM and SIGHUP sent to tfres alone (``kill``,
Kubernetes, a batch scheduler) are passed on to the child, and so is a SIGINT that did not
come from the terminal. Whatever happens, the record is saved: a command that fails, is
killed or interrupted gives a record with ``status="partial"``, its exit status or signal and
``end_reason`` in words.

Watchers (the memory budget, the live dashboard) follow a small protocol, :class:`Watcher`:
``on_start(pid)``, ``on_sample(sample) -> reason | None`` (a reason stops the command: SIGTERM,
then SIGKILL to the whole tree after ``grace_seconds``) and ``on_stop(record)``.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, Protocol

from tfres.backends.proc import signal_tree
from tfres.errors import TfresError
from tfres.record import Record, save
from tfres.sampler.sampler import DEFAULT_INTERVAL_SECONDS, Sampler
from tfres.timeline import Sample
from tfres.watch.monitor import finish_record

__all__ = ["Watcher", "WatchResult", "CommandNotFoundError", "watch", "exit_status_of"]

log = logging.getLogger("tfres")

#: signals sent to tfres that are passed on to the command
FORWARDED_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


class Watcher(Protocol):
    """What :func:`watch` calls while a command runs (all three on tfres's side)."""

    def on_start(self, pid: int) -> None: ...

    def on_sample(self, sample: Sample) -> str | None: ...

    def on_stop(self, record: Record) -> None: ...


class CommandNotFoundError(TfresError):
    """The command cannot be started; ``exit_status`` is the shell's (127 or 126)."""

    def __init__(self, message: str, *, exit_status: int) -> None:
        self.exit_status = exit_status
        super().__init__(message)


@dataclass
class WatchResult:
    """What :func:`watch` gives back: the saved record and the command's exit status."""

    record: Record
    exit_status: int
    store_number: int | None = None
    store_error: str | None = None


def exit_status_of(returncode: int) -> int:
    """A ``Popen.returncode`` as a shell shows it: -N (killed by signal N) becomes 128 + N."""
    return 128 - returncode if returncode < 0 else returncode


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _resolve(command: Sequence[str], env: Mapping[str, str]) -> str:
    if not command:
        raise CommandNotFoundError(
            "no command given: write it after --, e.g. tfres run -- python train.py",
            exit_status=2,
        )
    program = command[0]
    if os.sep in program:
        path = Path(program)
        if not path.exists():
            raise CommandNotFoundError(f"command not found: {program}", exit_status=127)
        if path.is_dir() or not os.access(path, os.X_OK):
            raise CommandNotFoundError(f"command is not executable: {program}", exit_status=126)
        return program
    found = shutil.which(program, path=env.get("PATH", os.defpath))
    if found is None:
        raise CommandNotFoundError(f"command not found: {program}", exit_status=127)
    return found


def _terminal_sends_sigint() -> bool:
    """Whether a Ctrl-C at our terminal reaches the child by itself (same foreground group)."""
    for fd in (0, 1, 2):
        try:
            if os.isatty(fd):
                return os.tcgetpgrp(fd) == os.getpgrp()
        except OSError:
            continue
    return False


class _Run:
    """The state of one watched command, shared by the main loop and the signal handlers."""

    def __init__(self, grace_seconds: float) -> None:
        #: None until the command has started; a signal that comes before waits in _pending
        self.proc: subprocess.Popen[bytes] | None = None
        self._pending: list[int] = []
        self.grace_seconds = grace_seconds
        self.wake = threading.Event()
        self.stop_reason: str | None = None
        self.received: list[str] = []
        self.terminated_at: float | None = None
        self.killed = False

    def on_signal(self, signum: int, frame: FrameType | None) -> None:
        name = _signal_name(signum)
        if signum == signal.SIGINT and _terminal_sends_sigint():
            # the terminal sent it to the child too; wait for the child
            self.received.append(f"{name} (Ctrl-C at the terminal, which the command got too)")
            return
        self.received.append(f"{name} (passed on to the command)")
        if self.proc is None:
            self._pending.append(signum)
            return
        try:
            self.proc.send_signal(signum)
        except OSError:
            pass
        self.wake.set()

    def attach(self, proc: subprocess.Popen[bytes]) -> None:
        """The command has started: pass on what came while it was starting."""
        self.proc = proc
        while self._pending:
            try:
                proc.send_signal(self._pending.pop(0))
            except OSError:
                pass
            self.wake.set()

    def request_stop(self, reason: str) -> None:
        if self.stop_reason is None:
            self.stop_reason = reason
            self.wake.set()

    def enforce_stop(self) -> None:
        """SIGTERM the child once a watcher asked; SIGKILL the whole tree after the grace."""
        if self.stop_reason is None or self.proc is None or self.proc.poll() is not None:
            return
        now = time.monotonic()
        if self.terminated_at is None:
            self.terminated_at = now
            signal_tree(self.proc.pid, signal.SIGTERM)
        elif not self.killed and now - self.terminated_at > self.grace_seconds:
            self.killed = True
            signal_tree(self.proc.pid, signal.SIGKILL)


def _finish(record: Record, run: _Run, returncode: int) -> None:
    if returncode < 0:
        record.exit_code = None
        record.signal = _signal_name(-returncode)
    else:
        record.exit_code = returncode
    if run.stop_reason is not None:
        record.status = "partial"
        record.end_reason = f"stopped by tfres: {run.stop_reason}"
        if run.killed:
            record.end_reason += f" (SIGKILL after {run.grace_seconds:g} s)"
    elif run.received:
        record.status = "partial"
        record.end_reason = f"interrupted: tfres received {run.received[0]}"
        if record.signal:
            record.end_reason += f"; the command was ended by {record.signal}"
        else:
            record.end_reason += f"; the command exited with status {returncode}"
    elif returncode < 0:
        record.status = "partial"
        record.end_reason = f"the command was killed by {record.signal}"
    elif returncode > 0:
        record.status = "partial"
        record.end_reason = f"the command exited with status {returncode}"
    else:
        record.status = "ok"


def _call(what: str, fn: Callable[..., Any], *args: Any, notes: list[str] | None = None) -> Any:
    try:
        return fn(*args)
    except Exception as err:  # a watcher that breaks must not lose the run or its record
        log.warning("tfres: %s failed: %s", what, err)
        if notes is not None:
            notes.append(f"{what} failed: {err}")
        return None


def watch(
    command: Sequence[str],
    *,
    label: str | None = None,
    interval: float = DEFAULT_INTERVAL_SECONDS,
    gpus: bool | Sequence[int] = True,
    env: Mapping[str, str] | None = None,
    watchers: Sequence[Watcher] = (),
    store: bool | str | os.PathLike[str] = True,
    out: str | os.PathLike[str] | None = None,
    live: bool = False,
    prometheus: str | int | None = None,
    job: str | None = None,
    worker: int | None = None,
    control: Mapping[str, Any] | None = None,
    grace_seconds: float = 10.0,
    on_start: Callable[[Record], None] | None = None,
) -> WatchResult:
    """Run ``command``, sample its whole process tree every ``interval`` s, save the record.

    ``env`` are variables set for the command on top of ours. ``gpus`` picks NVML indices
    (True: those the command's ``CUDA_VISIBLE_DEVICES`` leaves, all when unset). ``live``
    shows the terminal dashboard (:mod:`tfres.watch.live`) and shows the command's output in it.
    ``store=False`` keeps the record out of the store; ``out`` also writes it to a file.
    ``on_start(record)`` is called once the command runs (the CLI prints the Prometheus URL).
    Raises :class:`CommandNotFoundError` (exit status 127/126) when the command cannot start;
    nothing is recorded then.

        result = watch(["python", "train.py"], label="exp1", interval=0.1)
        sys.exit(result.exit_status)
    """
    child_env = dict(os.environ)
    child_env.update(env or {})
    argv = list(command)
    _resolve(argv, child_env)
    run_argv = argv
    for w in watchers:  # optional hook: a watcher may wrap the command (systemd-run --scope)
        wrap = getattr(w, "wrap_command", None)
        if callable(wrap):
            run_argv = list(_call(f"watcher {type(w).__name__}", wrap, run_argv) or run_argv)
    if gpus is True and "CUDA_VISIBLE_DEVICES" in (env or {}):
        from tfres.sampler.gpu_poll import visible_gpu_indices

        gpus = visible_gpu_indices(child_env["CUDA_VISIBLE_DEVICES"]) or True
    record = Record(
        kind="run", label=label, command=argv, interval_seconds=interval, job=job, worker=worker
    )
    record.control.update(control or {})
    from tfres.machine.fingerprint import fingerprint

    try:
        record.fingerprint = fingerprint().to_dict()
    except Exception as err:  # the run matters more than the fingerprint
        record.notes.append(f"the machine fingerprint could not be taken: {err}")
    exporter = None
    if prometheus is not None:
        from tfres.watch.prometheus import PrometheusExporter

        exporter = PrometheusExporter(prometheus, job=job, worker=worker)
        record.extra["prometheus_url"] = exporter.url

    dashboard = None
    if live:
        from tfres.watch.live import LiveDashboard

        dashboard = LiveDashboard(argv, interval=interval)
        child_env.setdefault("PYTHONUNBUFFERED", "1")  # show lines as they are printed
    steps_file, own_steps_file = _steps_file(child_env)
    out_pipe: int | None = None
    err_pipe: int | None = None
    if dashboard is not None:
        # both on the dashboard's terminal: one pipe keeps their lines in the order printed
        out_pipe = subprocess.PIPE
        err_pipe = subprocess.STDOUT if dashboard.one_terminal() else subprocess.PIPE
    # the handlers go in before the command starts: a signal in between is held for it,
    # never lost (and never leaves tfres gone with the command still running)
    run = _Run(grace_seconds)
    in_main = threading.current_thread() is threading.main_thread()
    previous: dict[int, Any] = {}
    if in_main:
        for sig in FORWARDED_SIGNALS:
            previous[sig] = signal.signal(sig, run.on_signal)
    wall_start = time.time()
    try:
        proc = subprocess.Popen(run_argv, env=child_env, stdout=out_pipe, stderr=err_pipe)
    except OSError as err:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if exporter is not None:
            exporter.close()
        if own_steps_file:
            Path(steps_file).unlink(missing_ok=True)
        if isinstance(err, FileNotFoundError):
            message, status = f"command not found: {argv[0]}", 127
        else:
            message, status = f"command cannot be run: {argv[0]} ({err.strerror or err})", 126
        raise CommandNotFoundError(message, exit_status=status) from err
    run.attach(proc)
    record.started_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(wall_start))
    sampler = Sampler(interval, pid=proc.pid, gpus=gpus, tf_memory=False)
    notes: list[str] = []

    def on_sample(sample: Sample) -> None:
        for w in watchers:
            reason = _call(f"watcher {type(w).__name__}", w.on_sample, sample, notes=notes)
            if reason:
                run.request_stop(str(reason))

    sampler.add_listener(on_sample)
    if exporter is not None:
        sampler.add_listener(exporter.update)
    returncode: int | None = None
    try:
        for w in watchers:
            _call(f"watcher {type(w).__name__}", w.on_start, proc.pid, notes=notes)
        sampler.start()
        if on_start is not None:
            _call("on_start", on_start, record, notes=notes)
        if dashboard is not None:
            dashboard.attach(sampler, proc)
            dashboard.start()
        tick = 0.5 if dashboard is not None else 0.1
        while proc.poll() is None:
            run.wake.wait(tick)
            run.wake.clear()
            run.enforce_stop()
            if dashboard is not None:
                dashboard.refresh()
        returncode = proc.wait()
    except BaseException:
        # tfres itself is going down (a second Ctrl-C in a debugger, an internal error):
        # end the command, then save what we have
        if proc.poll() is None:
            signal_tree(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=grace_seconds)
            except subprocess.TimeoutExpired:
                signal_tree(proc.pid, signal.SIGKILL)
        returncode = proc.wait()
        if not run.received:
            run.received.append("an internal error")
        raise
    finally:
        sampler.stop()
        if dashboard is not None:
            dashboard.stop()
        if in_main:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        if exporter is not None:
            exporter.close()
        record.ended_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        finish_record(record, sampler)
        _read_steps(record, steps_file, own_steps_file, sampler.t0)
        _finish(record, run, proc.returncode if returncode is None else returncode)
        record.notes.extend(n for n in notes if n not in record.notes)
        for w in watchers:
            _call(f"watcher {type(w).__name__}", w.on_stop, record, notes=record.notes)
        result = _persist(record, store=store, out=out)
    result.exit_status = exit_status_of(record_returncode(record))
    return result


def _steps_file(child_env: dict[str, str]) -> tuple[str, bool]:
    """The file the command's step timers write to (``$TFRES_STEPS_FILE``, see tfres.steps)."""
    if child_env.get("TFRES_STEPS_FILE"):
        return child_env["TFRES_STEPS_FILE"], False
    fd, path = tempfile.mkstemp(prefix="tfres-steps-", suffix=".jsonl")
    os.close(fd)
    child_env["TFRES_STEPS_FILE"] = path
    return path, True


def _read_steps(record: Record, path: str, own: bool, t0: float | None) -> None:
    try:
        from tfres.watch.steps import read_steps_file

        record.steps.extend(read_steps_file(path, t0_monotonic=t0))
    except Exception as err:  # steps are a bonus: never lose the record for them
        log.warning("tfres: could not read the steps file %s: %s", path, err)
    if own:
        try:
            os.unlink(path)
        except OSError:
            pass


def record_returncode(record: Record) -> int:
    """The ``Popen.returncode`` a record describes (negative for a signal)."""
    if record.signal:
        try:
            return -int(signal.Signals[record.signal])
        except KeyError:
            return 1
    return int(record.exit_code or 0)


def _persist(
    record: Record, *, store: bool | str | os.PathLike[str], out: str | os.PathLike[str] | None
) -> WatchResult:
    try:
        from tfres.diagnosis.diagnose import diagnose

        record.findings = [f.to_dict() for f in diagnose(record)]
    except Exception as err:  # a broken rule must not lose the record
        log.warning("tfres: diagnosis failed: %s", err)
        record.notes.append(f"diagnosis failed: {err}")
    result = WatchResult(record=record, exit_status=0)
    errors: list[str] = []
    if out is not None:
        try:
            save(record, Path(out))
        except Exception as err:
            errors.append(f"could not write {out}: {err}")
    if store is not False:
        from tfres.store import Store

        try:
            with Store(None if store is True else store) as s:
                result.store_number = s.save(record)
        except Exception as err:
            errors.append(str(err))
    if errors:
        if out is None or len(errors) > 1:  # never lose a run: keep it beside the user
            fallback = Path.cwd() / f"tfres-{record.id}.json"
            try:
                save(record, fallback)
                errors.append(f"the record was written to {fallback} instead")
            except Exception as err:
                errors.append(f"could not write {fallback} either: {err}")
        result.store_error = "; ".join(errors)
        log.warning("tfres: %s", result.store_error)
    return result
