# ruff: noqa: UP004, UP031  (child-side: the style of sitecustomize.py, no tfres imports)
"""The time custom loops spend in ``next()`` of tf.data iterators, and what a ``next()``
costs with its element ready (:func:`next_floor_seconds`).

A loop over tf.data waits for its input in ``next()``: the hook times each outermost call
(:func:`patch`) and hands the seconds and the number of reads to the loop's next step
(:mod:`_tfres_loops`). But ``next()`` is never free: an eager iterator's call runs an op
and wraps its tensors, 0.1-0.2 ms here with the pipeline's batch ready. Counted whole,
that read as input in a loop of tiny steps: a 5-6 ms step over a prefetched, in-memory
pipeline read 12-21% input against a truth of 0%
(``unseen30/eval_fullholdout_reviews``, whose truth trains the same loop on
``from_tensors(batch).repeat()`` and so pays the same call). At exit the hook times
``next()`` on an iterator whose element is always ready, of the same structure as the
loop's (``from_tensors`` of zeros, repeated), and only the time above it, for each read, is
the step's input.
"""

import threading

import _tfres_cached
import _tfres_instrument as core

#: next() calls timed on the ready iterator, after as many to warm it up; their median counts
FLOOR_CALLS = 30

_IN_NEXT = threading.local()
_SPEC = [None]  # the element_spec of the last tf.data iterator a loop read


def patch():
    """Time ``next()`` of tf.data iterators, and of a ``tf.distribute`` strategy's (the
    iterator of ``strategy.experimental_distribute_dataset``, which reads its workers'
    iterators without their ``__next__``: a ``MirroredStrategy`` loop read 2% input against
    a truth of 53% before, ``unseen17/input_mirrored_keyword_spotting``). An iterator read
    inside another's ``next()`` is not counted twice. Only a plain iterator's reads are
    counted against the floor: a distributed one's call costs more, and is not measured."""
    from tensorflow.python.data.ops import iterator_ops

    _time_next(iterator_ops.OwnedIterator, counted=True)
    _tfres_cached.track(iterator_ops.OwnedIterator)  # a graph may capture one (_tfres_cached)
    try:
        from tensorflow.python.distribute import input_lib
    except ImportError:  # a TensorFlow without it: its loops read Python input only
        return
    _time_next(input_lib.DistributedIteratorBase, counted=False)


def _time_next(cls, counted):
    original = cls.__next__

    def __next__(self):
        if getattr(_IN_NEXT, "active", False):
            return original(self)
        _IN_NEXT.active = True
        start = core._clock()
        try:
            return original(self)
        finally:
            _IN_NEXT.active = False
            core.INSTRUMENT.iterator_wait += core._clock() - start
            if counted:
                core.INSTRUMENT.iterator_reads += 1
                _SPEC[0] = getattr(self, "element_spec", None)

    cls.__next__ = __next__


def next_floor_seconds(calls=FLOOR_CALLS):
    """The median seconds of ``next()`` on an iterator of the last read iterator's element
    structure whose element is always ready, or None: no iterator was read, or its elements
    are not plain tensors (ragged, sparse, nested datasets), or it failed."""
    spec = _SPEC[0]
    if spec is None:
        return None
    import tensorflow as tf

    def zeros(one):
        if type(one) is not tf.TensorSpec or one.shape.rank is None:
            raise TypeError("not a plain tensor: %r" % (one,))
        shape = [d if d is not None else 1 for d in one.shape]
        return tf.fill(shape, "") if one.dtype == tf.string else tf.zeros(shape, one.dtype)

    try:
        element = tf.nest.map_structure(zeros, spec)
    except (TypeError, ValueError):
        return None
    iterator = iter(tf.data.Dataset.from_tensors(element).repeat())
    _IN_NEXT.active = True  # not the program's reads
    try:
        times = []
        for i in range(2 * calls):
            start = core._clock()
            next(iterator)
            if i >= calls:
                times.append(core._clock() - start)
    finally:
        _IN_NEXT.active = False
    times.sort()
    return times[len(times) // 2]
