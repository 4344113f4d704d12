# ruff: noqa: UP004, UP031  (child-side: the style of sitecustomize.py, no tfres imports)
"""Read a TensorFlow profiler trace (``*.xplane.pb``): per-step input wait, compute and other.

Runs in the child (``tfres run``'s start-up hook) and in tfres alike: standard library plus
the ``xplane_pb2`` that ships inside the TensorFlow wheel. A step is a host TraceMe named
``train``/``test``/``predict`` with a ``step_num`` stat (the marker TensorBoard's overview
looks for; the hook writes one around each Keras step of the window). Inside a step:

- input: the time of ``IteratorGetNext*Op::DoCompute`` events (the step's graph waits in
  that op until tf.data has its next element), clipped to the step; plus the step's time
  outside its function and outside that op while the pipeline runs Python (a ``PyFunc``,
  ``EagerPyFunc`` or ``PyFuncStateless`` on a ``tf_data`` thread: ``from_generator``, a
  Keras generator or ``PyDataset``, a ``py_function`` map; a PyDataset's worker thread making
  a batch, :data:`ITEM_MARKER`). That Python holds the GIL, which
  the step's own Python (the function call, Keras's loop) needs: there the step waits for
  its input as surely as in ``IteratorGetNext``, and the trace records no op for it;
- compute: the time of ``EagerLocalExecute*`` events on the step's thread (the step's
  function running) less the input inside them;
- other: the rest of the step (Python, callbacks, the loop itself).

:func:`with_step_alone` then adds the third part of input: the step's running time above
the same call on a cached batch (the pipeline taking cores from the step), where the hook
timed one (:mod:`_tfres_alone`), and :func:`without_profiler` takes out what the profiler
itself added to the window's steps.
"""

import glob
import os
import statistics

_STEP_NAMES = ("train", "test", "predict")
#: the hook's TraceMe around each call of the train function in the window
CALL_MARKER = "tfres_train_call"
#: the hook's TraceMe around each batch a ``keras.utils.PyDataset`` worker thread makes
#: (:func:`_tfres_window.mark_items`): the pipeline's Python, on a thread of Keras's pool
ITEM_MARKER = "tfres_input_item"


def _xplane_pb2():
    from tensorflow.tsl.profiler.protobuf import xplane_pb2  # ships in the TF wheel

    return xplane_pb2


def latest_xplane(logdir):
    """The newest ``*.xplane.pb`` under ``logdir/plugins/profile``, or None."""
    found = glob.glob(os.path.join(logdir, "plugins", "profile", "*", "*.xplane.pb"))
    return max(found, key=os.path.getmtime) if found else None


def overlap(spans, start, end):
    """Time of ``spans`` inside ``start``-``end``, summed (spans that overlap count each)."""
    total = 0
    for s, e in spans:
        lo, hi = max(s, start), min(e, end)
        if hi > lo:
            total += hi - lo
    return total


def _merged(spans):
    """``spans`` sorted and merged where they overlap."""
    out = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [tuple(span) for span in out]


def _gaps(busy, start, end):
    """The parts of ``start``-``end`` that the merged ``busy`` spans leave free."""
    out, at = [], start
    for s, e in busy:
        if e <= at or s >= end:
            continue
        if s > at:
            out.append((at, s))
        at = max(at, e)
    if at < end:
        out.append((at, end))
    return out


#: the ops that run Python inside a graph: in a tf.data thread, the input pipeline's Python
_PY_FUNC_OPS = ("PyFunc", "EagerPyFunc", "PyFuncStateless")


def _is_pipeline_python(name, line_name):
    return line_name.startswith("tf_data") and name.rsplit(":", 1)[-1] in _PY_FUNC_OPS


def _is_pipeline_op(name, line_name):
    """An op the pipeline runs on one of tf.data's threads (``DecodePng:DecodePng``): its
    work, as opposed to the iterators' own spans (``Iterator::Prefetch``, ``...Consume``),
    which mostly wait."""
    return line_name.startswith("tf_data") and ":" in name and "::" not in name


def is_iterator_read(name):
    """An ``IteratorGetNext*`` op's ``DoCompute``: a graph waiting for tf.data's next
    element."""
    return name.startswith("IteratorGetNext") and name.endswith("::DoCompute")


def plane_events(plane):
    """(name, stats, start_ps, end_ps, line_id) for every event of a plane."""
    names = plane.event_metadata
    stat_names = plane.stat_metadata
    for line in plane.lines:
        base = line.timestamp_ns * 1000
        for ev in line.events:
            meta = names.get(ev.metadata_id)
            name = meta.name if meta is not None else ""
            start = base + ev.offset_ps
            yield name, ev, stat_names, start, start + ev.duration_ps, line.id


def _step_num(ev, stat_names):
    for stat in ev.stats:
        meta = stat_names.get(stat.metadata_id)
        if meta is not None and meta.name == "step_num":
            return int(stat.int64_value or stat.uint64_value or 0)
    return None


def host_planes(path):
    """The host planes of the trace at ``path`` (``/host:CPU``)."""
    space = _xplane_pb2().XSpace()
    with open(path, "rb") as fh:
        space.ParseFromString(fh.read())
    return [plane for plane in space.planes if plane.name.startswith("/host:")]


def step_breakdown(path):
    """``[{kind, step, duration_seconds, input_seconds, compute_seconds, other_seconds}]``
    for every step marker of the host plane of the trace at ``path``, in time order."""
    steps = []
    for plane in host_planes(path):
        markers, inputs, executes, python, calls, pipeline = [], [], {}, [], {}, {}
        line_names = {line.id: line.name for line in plane.lines}
        for name, ev, stat_names, start, end, line_id in plane_events(plane):
            if name in _STEP_NAMES:
                num = _step_num(ev, stat_names)
                if num is not None:
                    markers.append((start, end, name, num, line_id))
            elif is_iterator_read(name):
                inputs.append((start, end))
            elif name == CALL_MARKER:
                calls.setdefault(line_id, []).append((start, end))
            elif name.startswith("EagerLocalExecute"):
                executes.setdefault(line_id, []).append((start, end))
            elif name == ITEM_MARKER or _is_pipeline_python(name, line_names[line_id]):
                python.append((start, end))
            if name == ITEM_MARKER or _is_pipeline_op(name, line_names[line_id]):
                pipeline.setdefault(line_id, []).append((start, end))
        python = _merged(python)
        pipeline = {line: _merged(spans) for line, spans in pipeline.items()}
        for start, end, name, num, line_id in sorted(markers):
            duration = end - start
            blocked = _merged(
                [(max(s, start), min(e, end)) for s, e in inputs if e > start and s < end]
            )
            running = _merged(
                [
                    (max(s, start), min(e, end))
                    for s, e in executes.get(line_id, [])
                    if e > start and s < end
                ]
            )
            # the function's time not blocked in IteratorGetNext (a wait outside the function,
            # as in Keras fetching the batch before the call, is input, not less compute)
            ran = sum(e - s for s, e in running) - sum(overlap(running, s, e) for s, e in blocked)
            busy = _merged(running + blocked)
            # outside the function and the wait, while the pipeline's Python holds the GIL
            gaps = _gaps(busy, start, end)
            gil = sum(overlap(python, s, e) for s, e in gaps)
            waited = sum(e - s for s, e in blocked)
            step = {
                "kind": {"train": "fit", "test": "evaluate"}.get(name, name),
                "step": num,
                "duration_seconds": duration / 1e12,
                "input_seconds": min(duration, waited + gil) / 1e12,
                "blocked_seconds": waited / 1e12,
                "gil_seconds": gil / 1e12,
                "compute_seconds": ran / 1e12,
                "other_seconds": max(0, sum(e - s for s, e in gaps) - gil) / 1e12,
                # the pipeline's work during the step, summed over its threads
                "pipeline_seconds": sum(overlap(spans, start, end) for spans in pipeline.values())
                / 1e12,
            }
            call = [
                (max(s, start), min(e, end))
                for s, e in calls.get(line_id, [])
                if e > start and s < end
            ]
            if call:
                # the train function's call: its time neither blocked nor held off by the GIL
                in_call = sum(e - s for s, e in call)
                lost = sum(overlap(blocked, s, e) for s, e in call) + sum(
                    overlap(python, max(gs, cs), min(ge, ce))
                    for gs, ge in gaps
                    for cs, ce in call
                    if min(ge, ce) > max(gs, cs)
                )
                step["call_seconds"] = in_call / 1e12
                step["running_seconds"] = max(0, in_call - lost) / 1e12
            steps.append(step)
    return steps


def summary(steps):
    """Totals over ``step_breakdown`` output: ``{steps, step_seconds, input_seconds, ...}``."""
    out = {"steps": len(steps)}
    for key in ("duration_seconds", "input_seconds", "compute_seconds", "other_seconds"):
        out[key] = round(sum(s[key] for s in steps), 9)
    for key in ("contention_seconds", "profiler_seconds"):
        if any(key in s for s in steps):
            out[key] = round(sum(s.get(key, 0) for s in steps), 9)
    return out


def step_alone_seconds(calls):
    """What the step alone costs, from its timed ``calls`` on a cached batch: their mean.

    A step's input is its time above this figure, summed over the window's steps, so the
    steps' slow ones (a collection, another program taking a core) are in that sum. The
    tf.data guide's truth, full step against cached step, takes the mean on both sides, and
    the slow steps cancel there. A lower quartile of the calls (the figure before 2026-11-26)
    dropped them on the cached side only, and left them in the input: a cached step inside
    ``fit`` runs 3-10% above the lower quartile of direct calls of its function
    (``benchmarks/accuracy/cached_step_gap.py``), and every Keras fit of the fifth unseen set
    read its input wait high."""
    return statistics.fmean(calls)


#: a step waited for its input when it spent this long, and this share of it, blocked in
#: ``IteratorGetNext`` or held off by the pipeline's Python (a prefetched batch is dequeued
#: in well under a millisecond)
WAITED_SECONDS = 0.0005
WAITED_SHARE = 0.05
#: a step that did not wait ran beside its pipeline when the pipeline's threads worked for
#: at least this share of it (their ops' time, summed over the threads)
PIPELINE_SHARE = 0.25


def waited(step):
    """Whether ``step`` waited for its input (see :data:`WAITED_SECONDS`)."""
    wait = step.get("blocked_seconds", 0.0) + step.get("gil_seconds", 0.0)
    return _waited(wait, step["duration_seconds"])


def _waited(wait_seconds, duration_seconds):
    return wait_seconds >= max(WAITED_SECONDS, WAITED_SHARE * duration_seconds)


def with_step_alone(steps, alone_calls, plain_calls=(), workers_share=None):
    """``steps`` with the train steps' slowdown by their own input counted as input.

    ``alone_calls`` are calls of the train function on a cached batch, each timed with no
    pipeline running and under the profiler as the window was, ``plain_calls`` the same
    calls with no profiler (:mod:`_tfres_alone`); a traced step's ``running_seconds`` is its
    call of the same function (the hook's ``tfres_train_call`` marker) less the time blocked
    in ``IteratorGetNext`` or held off by the pipeline's Python. What a step ran above the
    call alone is what it lost to the pipeline running beside it (cores, memory bandwidth):
    the trace marks no op for it. Each such step counts that much more (at most its running
    time) as input, and says so in ``contention_seconds``; its compute is at most the rest.
    Step by step, the tf.data guide's full step against the step on a cached batch:

    - a step that waited for its input (:func:`waited`) lasts as long as the pipeline takes:
      whatever slowed its math, the profiler's own events included, only shortened its wait,
      so it is compared with the plain call (without plain calls, the profiled ones). Its
      compute is the plain call, and its input the rest of its function's time and its wait
      outside it. Where its running time reads *below* the plain call, the trace's wait
      overlapped the step's own math: with ``steps_per_execution`` above 1 the function
      loops over several batches, and the next batch's ``IteratorGetNext`` blocks while the
      last one's ops still run. That much of the wait is the step's compute, and says so in
      ``overlap_seconds``;
    - a step that did not wait is compared like for like with the profiled call
      (:func:`slowed_by_input`).

    The pipeline's work beside a step: its threads' ops in the trace (``pipeline_seconds``)
    or, where more, the CPU of an unprofiled call after the window on threads a plain call
    alone did not run on (where threads cannot be read, the process's CPU above a plain call
    alone's: ``cpu_beside_seconds``, :func:`window_input`; a ``TextLineDataset``'s file reads
    run no op the trace shows), plus ``workers_share`` of the step for worker processes (a
    ``PyDataset``'s pool: :attr:`_tfres_window.ProfilerWindow.workers_share`).

    Without a timing, ``steps`` is returned as read."""
    timed = [s for s in steps if s["kind"] == "fit" and "running_seconds" in s]
    if not alone_calls or not timed:
        return steps
    alone = step_alone_seconds(alone_calls)
    plain = step_alone_seconds(plain_calls) if plain_calls else alone

    def beside(step):
        native = max(step.get("pipeline_seconds", 0.0), step.get("cpu_beside_seconds", 0.0))
        return native + (workers_share or 0.0) * step["duration_seconds"]

    for s in timed:
        if waited(s):
            _against_plain(s, plain)
            continue
        duration, run = s["duration_seconds"], s["running_seconds"]
        slower = slowed_by_input(False, duration, run, alone, beside(s)) or 0.0
        s["input_seconds"] = min(duration, s["input_seconds"] + slower)
        s["compute_seconds"] = min(s["compute_seconds"], run - slower)
        s["other_seconds"] = max(0.0, duration - s["input_seconds"] - s["compute_seconds"])
        s["contention_seconds"] = slower
    return steps


def _against_plain(step, plain_seconds):
    """A step that waited, read as the tf.data guide reads it: its compute is the step alone
    (``plain_seconds``); its input, its wait and its function's time above that; other, the
    rest. Running time above the step alone is ``contention_seconds``, below it (the wait
    overlapped the step's own ops) ``overlap_seconds``."""
    duration, running = step["duration_seconds"], step["running_seconds"]
    lost = running - plain_seconds
    step["input_seconds"] = min(duration, max(0.0, step["input_seconds"] + lost))
    if lost < 0:  # the traced compute is short by the overlap: the step alone stands for it
        step["compute_seconds"] = min(plain_seconds, duration - step["input_seconds"])
        step["overlap_seconds"] = -lost
    else:
        step["compute_seconds"] = min(step["compute_seconds"], plain_seconds)
    step["other_seconds"] = max(0.0, duration - step["input_seconds"] - step["compute_seconds"])
    step["contention_seconds"] = min(max(0.0, lost), running)


#: how a Keras step's input wait is measured, in words (the record's ``profile`` method)
METHOD = (
    "profiler trace: IteratorGetNext time inside each step marker, and the step's time "
    "outside its function while the pipeline's Python holds the GIL; and the function's "
    "time above the same step alone on a cached batch; less what the profiler added to the "
    "window's steps (their median above the unprofiled steps after them)"
)


def without_profiler(steps, extra_seconds, call_seconds=None):
    """``steps`` (:func:`with_step_alone`'s) as unprofiled steps would run them: each train
    step gives up ``extra_seconds`` (:func:`_tfres_window.profiler_seconds`), at most the part of it
    that the profiler slowed, and says so in ``profiler_seconds``.

    The profiler's events slow the step's function and, more, the pipeline's ops and Python
    (every tf.data op of every element is traced). The profiler's cost on the function
    itself, ``call_seconds`` (the profiled calls alone above the plain ones), is in the
    step's compute, which gives that up. A step that waited for its input (:func:`waited`)
    lasts as long as its pipeline takes: the rest made it wait longer, and its input gives
    that up (until session 34 all of it: a TFRecord parse ``map`` read 50% against 62%).
    Another step's input is what its function ran above the step alone under the profiler
    (``contention_seconds``): the rest slowed the pipeline beside the step, which took that
    much more from the function, and comes out of the contention (until 2026-11-27 out of
    the compute: a TFRecord ``map`` read 62% against 39-52%). Without ``call_seconds`` the
    cost is the pipeline's where the step waited, else the function's. The input-wait
    fraction is then taken over each step less ``profiler_seconds``
    (:func:`tfres.diagnosis.facts.input_wait_fraction`). No figure (None): ``steps`` as read."""
    if extra_seconds is None:
        return steps
    for s in steps:
        if s["kind"] != "fit":
            continue
        if waited(s):
            own = min(call_seconds or 0.0, extra_seconds, s["compute_seconds"])
            s["compute_seconds"] -= own
            taken = own + min(extra_seconds - own, s["input_seconds"])
            s["input_seconds"] -= taken - own
        else:
            own = extra_seconds if call_seconds is None else min(extra_seconds, call_seconds)
            beside = min(extra_seconds - own, s.get("contention_seconds", 0.0))
            s["input_seconds"] -= beside
            if beside:
                s["contention_seconds"] -= beside
            rest = min(extra_seconds - beside, s["compute_seconds"])
            s["compute_seconds"] -= rest
            taken = beside + rest
        s["profiler_seconds"] = taken
    return steps


def window_input(steps, window, alone_calls, plain_calls=(), plain_cpu=None, plain_threads=None):
    """A profiler window's steps, their input read as the hook and ``ResourceMonitor`` read
    it: against the step alone (:func:`with_step_alone`; the window's worker processes, the
    CPU of the calls after it on other threads than ``plain_threads``, a plain call alone's,
    or else above ``plain_cpu``, its CPU), less the profiler's own cost
    (:func:`without_profiler`). ``window``: the :class:`_tfres_window.ProfilerWindow`.
    Returns the steps and that cost per step (None where it could not be told)."""
    beside = window.cpu_beside_seconds(plain_cpu, plain_threads)
    for s in steps if beside is not None else ():
        if s["kind"] == "fit":
            s["cpu_beside_seconds"] = beside
    steps = with_step_alone(steps, alone_calls, plain_calls, window.workers_share)
    extra = window.profiler_seconds()
    own = None
    if alone_calls and plain_calls:
        own = max(0.0, step_alone_seconds(alone_calls) - step_alone_seconds(plain_calls))
    return without_profiler(steps, extra, own), extra


def loop_step_input(wait, duration_seconds, call_seconds, alone_seconds, beside_seconds=0.0):
    """A tf.data-fed custom loop step's input wait, read as :func:`with_step_alone` reads a
    Keras step.

    ``wait`` is what the hook timed before the call in ``next()`` of tf.data iterators (0.0
    for a function that reads its dataset inside its own graph), or None where nothing was
    timed. ``alone_seconds`` is the loop's function alone on one of its batches (the mean
    of its calls, :func:`step_alone_seconds`; :class:`_tfres_loopalone.LoopCallAlone`);
    ``beside_seconds``, how long the pipeline worked during the call: its Python's spans
    (:class:`_tfres_pyinput.PipelinePython`) or its native work
    (:func:`_tfres_loopalone.native_beside`), whichever is more. What the call ran above the
    call alone is input too where the pipeline slowed it (:func:`slowed_by_input`). Python
    input: :func:`_tfres_pyinput.python_step_input`."""
    if wait is None or alone_seconds is None:
        return wait
    waited = _waited(wait, duration_seconds)
    slower = slowed_by_input(waited, duration_seconds, call_seconds, alone_seconds, beside_seconds)
    return wait if slower is None else min(duration_seconds, wait + slower)


def slowed_by_input(waited, duration_seconds, call_seconds, alone_seconds, beside_seconds):
    """What a call ran above the call alone that its tf.data pipeline took, on its own
    threads beside the call (cores, the GIL): all of it where the step ``waited`` (it lasts
    as long as the pipeline takes) or the pipeline worked beside it (``beside_seconds``) for
    :data:`PIPELINE_SHARE` of the step or more; below that, at most that work, the rest
    (other programs) not input. None where the pipeline did neither."""
    slower = min(call_seconds, max(0.0, call_seconds - alone_seconds))
    if waited or beside_seconds >= PIPELINE_SHARE * duration_seconds:
        return slower
    return min(slower, beside_seconds) if beside_seconds > 0 else None
