"""A custom loop's reads of tf.data iterators (`_tfres_iterators`): each outermost ``next()``
is timed and counted, and what a ``next()`` costs with its element ready is timed at exit."""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Iterator

import pytest

from tfres.devices.child_env import INJECT_DIR

tf = pytest.importorskip("tensorflow")

sys.path.insert(0, str(INJECT_DIR))
import _tfres_instrument as core  # noqa: E402
import _tfres_iterators as iterators  # noqa: E402

sys.path.remove(str(INJECT_DIR))


@pytest.fixture()
def timed(monkeypatch: pytest.MonkeyPatch) -> type:
    """An iterator class of its own with the hook's timing on it (tf.data's own class is
    left as it is for the other tests), and a fresh bookkeeping."""
    from tensorflow.python.data.ops import iterator_ops

    class Timed(iterator_ops.OwnedIterator):  # type: ignore[misc]
        pass

    iterators._time_next(Timed, counted=True)
    monkeypatch.setattr(core, "INSTRUMENT", core.Instrument({}))
    monkeypatch.setattr(iterators, "_SPEC", [None])
    return Timed


def _iterate(dataset: tf.data.Dataset, cls: type) -> Iterator:
    it = iter(dataset)
    it.__class__ = cls
    return it


def test_each_read_is_timed_and_counted(timed: type) -> None:
    def slow(i: tf.Tensor) -> tf.Tensor:
        time.sleep(0.01)
        return i

    ds = tf.data.Dataset.range(10).map(lambda i: tf.py_function(slow, [i], tf.int64))
    it = _iterate(ds, timed)
    for _ in range(5):
        next(it)
    assert core.INSTRUMENT.iterator_reads == 5
    assert core.INSTRUMENT.iterator_wait >= 5 * 0.009  # each read waited for its sleep
    assert iterators._SPEC[0] == ds.element_spec


def test_a_ready_next_costs_less_than_one_that_waits(timed: type) -> None:
    """The floor, against the loop's own reads of a pipeline with no batch ready (a serial
    map of 2 ms of TensorFlow math, no prefetch), timed apart."""
    assert iterators.next_floor_seconds() is None  # nothing read yet

    def heavy(i: tf.Tensor) -> tf.Tensor:
        x = tf.random.normal((256, 256))
        for _ in range(8):
            x = tf.matmul(x, x) / 256.0
        return tf.reduce_sum(x) + tf.cast(i, tf.float32)

    it = _iterate(tf.data.Dataset.range(40).map(heavy), timed)
    reads = []
    for _ in range(30):
        start = time.perf_counter()
        next(it)
        reads.append(time.perf_counter() - start)
    floor = iterators.next_floor_seconds()
    assert floor is not None and 0.0 < floor < statistics.median(reads) / 2
    assert core.INSTRUMENT.iterator_reads == 30  # the floor's own reads are not the program's


def test_no_floor_for_elements_that_are_not_plain_tensors(timed: type) -> None:
    ragged = tf.data.Dataset.range(1, 5).map(
        lambda n: tf.RaggedTensor.from_row_lengths(tf.range(n), [n])
    )
    next(_iterate(ragged, timed))
    assert iterators.next_floor_seconds() is None
    strings = tf.data.Dataset.from_tensor_slices((["a b", "c"], [[1.0], [2.0]])).batch(2)
    next(_iterate(strings, timed))
    assert iterators.next_floor_seconds() is not None  # strings and floats are plain
