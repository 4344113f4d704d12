# ruff: noqa: UP004, UP031  (child-side: the style of sitecustomize.py, no tfres imports)
"""The profiler window of a Keras ``fit`` in a ``tfres run`` child (see :mod:`_tfres_keras`).

The process has one :class:`_tfres_window.ProfilerWindow`, made at the first train step:
``--profile``'s steps, else :data:`_tfres_instrument.DEFAULT_WINDOW`. It starts the profiler
at the window's first step and marks each step inside it; at exit its trace is read
(:mod:`_tfres_xplane`) and the input wait per step and the window's breakdown are sent.
"""

import os
import shutil

import _tfres_alone as alone
import _tfres_fitplan
import _tfres_instrument as core
import _tfres_window

_WINDOW = []  # type: list  # the process's one ProfilerWindow, once a fit has a step


def _window():
    """The process's profiler window: ``--profile``'s steps, or the default ones."""
    if not _WINDOW:
        import _tfres_xplane as xplane

        first, last = core.INSTRUMENT.window or core.DEFAULT_WINDOW
        caps = {} if _user_window() else _tfres_window.DEFAULT_CAPS  # --profile runs whole
        _WINDOW.append(
            _tfres_window.ProfilerWindow(
                first, last, xplane.CALL_MARKER, _arm, stopped=_keep_trace, **caps
            )
        )
    return _WINDOW[0]


def _user_window():
    """Whether the window is the user's (``--profile``): its trace is kept where asked."""
    return core.INSTRUMENT.window is not None


def _arm(model, only_open=False):
    try:
        alone.for_process(core.INSTRUMENT).arm(model, only_open)
    except Exception as err:
        core.INSTRUMENT.failed("arming the cached-batch step", err)


def _new_logdir():
    inst = core.INSTRUMENT
    return inst.profile_dir if _user_window() and inst.profile_dir else core._tmpdir()


def fit_window(fit_start, params, model):
    """A ``fit`` begins at train step ``fit_start``: the default window ends where it fits
    that ``fit``'s length (:mod:`_tfres_fitplan`; Keras's callback ``params``)."""
    if not _user_window():
        _tfres_fitplan.fit_window(_window(), fit_start, params, model)


def window_step(index, model):
    """Start the profiler at the window's first train step; mark each step inside it."""
    _window().begin(index, model, _new_logdir)


def end_step():
    if _WINDOW:
        _WINDOW[0].end_step()


def stop_window():
    """The fit ends: stop the profiler, and a later fit's steps are not the window's."""
    if _WINDOW:
        _WINDOW[0].stop()
        _WINDOW[0].release()


def _note_stop_error(inst):
    """Note what stopping the window's profiler raised, if anything."""
    if _WINDOW:
        error = _WINDOW[0].stop_error()
        if error is not None:
            inst.failed("stopping the profiler", error)


def _keep_trace(window):
    """The window's profiler has stopped: its trace is read at exit."""
    core.INSTRUMENT.profiled.append((window, _user_window()))


def finish_profiles(inst):
    """At exit: read the window's trace, send the input wait per step and the breakdown."""
    stop_window()
    _note_stop_error(inst)
    if inst.window is not None and (not _WINDOW or _WINDOW[0].state == "waiting"):
        core.window_not_reached(inst)
    for window, user in inst.profiled:  # a ProfilerWindow, and whether it is --profile's
        try:
            _read_profile(inst, window, user)
        except Exception as err:
            inst.failed("reading the profiler trace in %s" % window.logdir, err)
        finally:
            if not user:
                shutil.rmtree(window.logdir, ignore_errors=True)


def _read_profile(inst, window, user):
    import _tfres_xplane as xplane

    logdir, workers_share = window.logdir, window.workers_share
    path = xplane.latest_xplane(logdir)
    if path is None:
        inst.note("the profiler wrote no trace in %s" % logdir)
        return
    timed, plain = alone.times(), alone.plain_times()
    steps, extra = xplane.window_input(
        xplane.step_breakdown(path),
        window,
        timed,
        plain,
        alone.plain_cpu_seconds(),
        alone.plain_threads(),
    )
    for s in steps:
        line = {
            "event": "input_wait",
            "kind": s["kind"],
            "step": s["step"],
            "input_wait_seconds": round(s["input_seconds"], 9),
        }
        if "profiler_seconds" in s:
            line["profiler_seconds"] = round(s["profiler_seconds"], 9)
        inst.events.write(line)
    first, last = window.first, window.last
    line = {
        "event": "profile",
        "window": [first, last],
        "ended_early": window.ended_early,
        "buffer_bytes": window.buffer_bytes,
        "user": user,
        "method": xplane.METHOD,
        "step_alone_seconds": round(xplane.step_alone_seconds(timed), 9) if timed else None,
        # what an unprofiled step takes besides its input, the fit's other steps read against
        # it (tfres.diagnosis.fit_input): the step alone with no profiler, and an unprofiled
        # step's time outside its call
        "plain_step_alone_seconds": _rounded(xplane.step_alone_seconds(plain) if plain else None),
        "outside_seconds": _rounded(window.outside_seconds()),
        "workers_cpu_share": None if workers_share is None else round(workers_share, 4),
        # the pipeline's work beside a step both ways (the first is the one read, where any)
        "cpu_beside_threads_seconds": _rounded(
            window.threads_beside_seconds(alone.plain_threads())
        ),
        "cpu_beside_process_seconds": _rounded(
            window.process_beside_seconds(alone.plain_cpu_seconds())
        ),
        "profiler_seconds_per_step": None if extra is None else round(extra, 9),
        "unprofiled_steps": len(window.later_seconds),
        "summary": xplane.summary(steps),
        "steps": [
            {k: (round(v, 9) if isinstance(v, float) else v) for k, v in s.items()} for s in steps
        ],
    }
    if user:
        line["dir"] = os.path.abspath(logdir)
        if last > max([s["step"] for s in steps] or [first]):
            inst.note(
                "--profile %d:%d: the program had only %d steps in the window"
                % (first, last, len(steps))
            )
    inst.events.write(line)


def _rounded(seconds):
    return None if seconds is None else round(seconds, 9)


def timed(index, epoch, duration):
    """Tell the window a train step's time (the steps after it give what it added)."""
    if _WINDOW:
        _WINDOW[0].timed(index, epoch, duration)
