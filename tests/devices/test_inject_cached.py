"""A call's input replaced by one cached batch (`_tfres_cached`): a function that reads tf.data
itself (an iterator or dataset handed to it, an iterator its graph captured) runs the graph it
traced on a batch held in memory, and the user's pipeline is not read again."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import numpy as np
import pytest

from tfres.devices.inject import _tfres_cached

tf = pytest.importorskip("tensorflow")

BATCH = 4
READS = 10  # each call reads this many batches


@pytest.fixture(scope="module", autouse=True)
def _tracked() -> None:
    from tensorflow.python.data.ops import iterator_ops

    _tfres_cached.track(iterator_ops.OwnedIterator)  # what tfres run's hook does
    _tfres_cached.track(iterator_ops.OwnedIterator)  # once is enough: no second wrapper


class Counted:
    """A generator's examples: example i is 8 values of i; ``made`` counts them."""

    def __init__(self) -> None:
        self.made = 0

    def __call__(self) -> Any:
        i = 0
        while True:
            self.made += 1
            yield np.full(8, i, np.float32)
            i += 1

    def dataset(self) -> Any:
        spec = tf.TensorSpec((8,), tf.float32)
        return tf.data.Dataset.from_generator(self, output_signature=spec).batch(BATCH)


def _batch_sum(index: int) -> float:
    """The sum of batch ``index`` of :meth:`Counted.dataset`."""
    return float(8 * sum(range(index * BATCH, (index + 1) * BATCH)))


def test_a_function_handed_its_iterator_runs_on_its_next_batch_cached() -> None:
    source = Counted()
    iterator = iter(source.dataset())

    @tf.function
    def epoch(it: Any) -> Any:
        total = tf.constant(0.0)
        for _ in tf.range(READS):
            total += tf.reduce_sum(next(it))
        return total

    assert float(epoch(iterator)) == sum(_batch_sum(i) for i in range(READS))
    call, reads = _tfres_cached.on_cached_input(epoch, type(epoch).__call__, (iterator,), {})
    assert reads
    made = source.made
    results = [float(call()) for _ in range(5)]
    # batch 10, the iterator's next, read once at set-up; the calls read it from memory
    assert results == [READS * _batch_sum(READS)] * 5
    assert source.made - made < 3 * BATCH  # not 5 calls x 10 reads of the pipeline
    assert epoch.experimental_get_tracing_count() == 1  # the graph it had traced


def test_a_function_whose_graph_captured_an_iterator_runs_on_a_cached_batch() -> None:
    source = Counted()
    iterator = iter(source.dataset())
    weights = tf.Variable(tf.ones((8, 1)))

    @tf.function
    def epoch() -> Any:
        total = tf.constant(0.0)
        for _ in tf.range(READS):
            total += tf.reduce_sum(tf.matmul(next(iterator), weights))
        return total

    @tf.function
    def plain(x: Any) -> Any:
        return tf.reduce_sum(tf.matmul(x, weights))

    epoch()
    plain(tf.ones((2, 8)))
    assert _tfres_cached.captures_iterator(epoch)
    assert not _tfres_cached.captures_iterator(plain)
    assert not _tfres_cached.captures_iterator(object())  # not a tf.function
    call, reads = _tfres_cached.on_cached_input(epoch, type(epoch).__call__, (), {})
    assert reads
    made = source.made
    assert [float(call()) for _ in range(4)] == [READS * _batch_sum(READS)] * 4
    assert source.made - made < 3 * BATCH
    assert float(epoch()) == sum(_batch_sum(i) for i in range(READS + 1, 2 * READS + 1))


def test_a_captured_iterator_the_program_let_go_of_is_held_for_its_step_alone() -> None:
    """``del it`` before exit (`unseen25/input_generator_turbine_vibration`): the iterator
    is held until exit, so the step alone still runs on one batch of it, from memory."""
    source = Counted()
    holder = {"it": iter(source.dataset())}

    @tf.function
    def step() -> Any:
        return tf.reduce_sum(next(holder["it"]))

    assert float(step()) == _batch_sum(0)
    assert _tfres_cached.captures_iterator(step)
    del holder["it"]
    gc.collect()
    try:
        call, reads = _tfres_cached.on_cached_input(step, type(step).__call__, (), {})
        made = source.made
        assert reads and [float(call()) for _ in range(4)] == [_batch_sum(1)] * 4
        assert source.made - made < 3 * BATCH  # its next batch, once: not 4 reads
    finally:
        _tfres_cached.let_go()


def test_once_let_go_of_the_captured_iterator_is_refused_not_read_again() -> None:
    """After :func:`let_go` the graph still holds the iterator's handle: a call made as it
    is would read the user's pipeline and carry its cost as "alone"."""
    source = Counted()
    holder = {"it": iter(source.dataset())}

    @tf.function
    def step() -> Any:
        return tf.reduce_sum(next(holder["it"]))

    step()
    assert _tfres_cached.captures_iterator(step)
    del holder["it"]
    _tfres_cached.let_go()
    gc.collect()
    with pytest.raises(_tfres_cached.Refused, match="let go of before exit"):
        _tfres_cached.on_cached_input(step, type(step).__call__, (), {})


def _reading(holder: dict) -> Any:
    """A step whose graph captures ``holder["it"]``, a fold's own function."""

    @tf.function
    def step() -> Any:
        return tf.reduce_sum(next(holder["it"]))

    return step


def test_only_the_latest_functions_iterators_are_held() -> None:
    """A new function over a new iterator each fold: the earliest functions' iterators are
    let go of once more than ``MAX_HELD_FUNCTIONS`` hold some, not kept to exit."""
    folds = _tfres_cached.MAX_HELD_FUNCTIONS + 1
    alive = []
    try:
        for _ in range(folds):
            holder = {"it": iter(Counted().dataset())}
            alive.append(weakref.ref(holder["it"]))
            step = _reading(holder)
            step()
            assert _tfres_cached.captures_iterator(step)
            del holder["it"], step
        gc.collect()
        assert [ref() is not None for ref in alive] == [False] + [True] * (folds - 1)
    finally:
        _tfres_cached.let_go()
    gc.collect()
    assert all(ref() is None for ref in alive)


def test_a_dataset_handed_to_the_function_becomes_its_first_batch_as_many_times() -> None:
    mapped = [0]

    def count(x: Any) -> Any:
        mapped[0] += 1
        return x

    data = tf.data.Dataset.from_tensor_slices(np.arange(24, dtype=np.float32).reshape(12, 2))
    ds = data.map(lambda x: tf.py_function(count, [x], tf.float32)).batch(3)
    ds = ds.map(lambda x: tf.ensure_shape(x, (None, 2)))

    @tf.function
    def epoch(dataset: Any) -> Any:
        total = tf.constant(0.0)
        for x in dataset:
            total += tf.reduce_sum(x)
        return total

    assert float(epoch(ds)) == float(np.arange(24).sum())
    before = mapped[0]
    call, reads = _tfres_cached.on_cached_input(epoch, type(epoch).__call__, (ds,), {})
    assert reads and float(call()) == 4 * float(np.arange(6).sum())  # 4 batches, the first
    float(call())
    assert mapped[0] - before <= 3 + 1  # the first batch, once (and one the prefetch pulled)


def test_what_cannot_be_cached_is_refused_with_its_reason() -> None:
    source = Counted()

    @tf.function
    def epoch(dataset: Any) -> Any:
        total = tf.constant(0.0)
        for x in dataset.take(2):
            total += tf.reduce_sum(x)
        return total

    ds = source.dataset()  # a generator's: its length is unknown
    epoch(ds)
    with pytest.raises(_tfres_cached.Refused, match="unknown or infinite length"):
        _tfres_cached.on_cached_input(epoch, type(epoch).__call__, (ds,), {})

    captured = tf.data.Dataset.range(6).batch(2)

    @tf.function
    def over_captured() -> Any:
        total = tf.constant(0, tf.int64)
        for x in captured:
            total += tf.reduce_sum(x)
        return total

    over_captured()
    with pytest.raises(_tfres_cached.Refused, match="a dataset it captured"):
        _tfres_cached.on_cached_input(over_captured, type(over_captured).__call__, (), {})

    used_up = iter(tf.data.Dataset.range(2).batch(2))

    @tf.function
    def step(it: Any) -> Any:
        return tf.reduce_sum(next(it))

    step(used_up)
    with pytest.raises(_tfres_cached.Refused, match="used up"):
        _tfres_cached.on_cached_input(step, type(step).__call__, (used_up,), {})


def test_a_function_handed_tensors_is_called_as_it_was() -> None:
    @tf.function
    def step(x: Any) -> Any:
        return tf.reduce_sum(x)

    x = tf.ones((3,))
    call, reads = _tfres_cached.on_cached_input(step, type(step).__call__, (x,), {})
    assert not reads and float(call()) == 3.0


@pytest.mark.parametrize(
    "spec_shape, batch_shape",
    [((16, 7), (16, 7)), ((None, 7), (16, 7)), ((None, None), (16, 7)), ((16, None), (16, 7))],
)
def test_the_cached_batches_keep_the_iterators_element_spec(
    spec_shape: tuple[int | None, ...], batch_shape: tuple[int, ...]
) -> None:
    spec = (tf.TensorSpec(spec_shape, tf.float32), tf.TensorSpec(spec_shape[:1], tf.int64))
    batch = (tf.ones(batch_shape), tf.zeros(batch_shape[:1], tf.int64))
    cached = _tfres_cached.cached(tf, [batch, batch], spec)
    assert cached.element_spec == spec
    got = list(cached.take(3))
    assert len(got) == 3 and all(x.shape == batch_shape for x, _ in got)


@pytest.mark.parametrize("spec_shape", [(None, None), (16, None), (None, None, 3)])
def test_batches_of_open_shapes_are_re_batched_with_no_function_to_trace(
    spec_shape: tuple[int | None, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A spec open past the batch (a parse whose static shape TensorFlow cannot tell) is met
    by padded re-batching, not a ``map``, whose function is traced inside the lending step;
    each batch comes back as it was, strings too."""

    def traced(*args: Any) -> None:
        raise AssertionError("a map's function was traced")

    monkeypatch.setattr(_tfres_cached, "relaxed", traced)
    shape = tuple(16 if d is None else d for d in spec_shape[:1]) + (5,) + spec_shape[2:]
    first = tf.reshape(tf.range(np.prod(shape), dtype=tf.float32), shape)
    second = first + 1000.0  # a second lent batch, another step's
    spec = (tf.TensorSpec(spec_shape, tf.float32), tf.TensorSpec(spec_shape[:1], tf.string))
    words = tf.constant([f"w{i}" for i in range(16)])
    cached = _tfres_cached.cached(tf, [(first, words), (second, words)], spec)
    assert cached.element_spec == spec
    got = list(cached.take(3))
    for (x, w), want in zip(got, (first, second, first), strict=True):
        assert np.array_equal(x.numpy(), want.numpy()) and list(w.numpy()) == list(words.numpy())
