# ruff: noqa: UP004, UP031  (child-side: the style of sitecustomize.py, no tfres imports)
"""A step's input replaced by one cached batch: the tf.data guide's counterfactual.

The step alone (:mod:`_tfres_alone`) runs the user's own function again with its input taken
from one batch held in memory, so no pipeline runs beside it. Keras's train function and a
custom loop's step handed tensors are simple: the same call on the same batch. A function
that reads tf.data itself is not: ``next(iterator)`` on an iterator made outside the
function (captured by its graph, a whole epoch under ``for _ in tf.range(n)``), an iterator
or a dataset handed to it. Called again as it is, it would read the user's pipeline, and
the call "alone" would carry the pipeline's cost: `unseen21/input_epoch_loop_retail_demand`
timed 2.03 s alone against calls of 1.8-2.2 s, and read no input against a truth of 54%.

:func:`on_cached_input` makes the call with each such iterator or dataset replaced by one
over a single cached batch of its own, of the same element spec, so TensorFlow runs the
function it already traced: an iterator handed to it is swapped in the arguments, one its
graph captured is swapped in the captured inputs of the traced (concrete) function, and a
dataset handed to it becomes its batch repeated as many times as the dataset has batches.
The iterators a program makes are known by :func:`track`, which registers each one weakly.
One that a traced function's graph captured is held until exit (:func:`captures_iterator`):
a program may let go of it before then, and the step alone needs one batch of it.
"""

import atexit
import weakref

#: every tf.data iterator the program made and still holds, by id (:func:`track`)
_ITERATORS = weakref.WeakValueDictionary()  # type: weakref.WeakValueDictionary
#: the iterator handles each function's graph captured, by id of the function, as
#: :func:`captures_iterator` found them: a program may let go of the iterator before exit
#: (``del it``, `unseen25/input_generator_turbine_vibration`), its handle still captured
_CAPTURED = {}  # type: dict
#: ...and those iterators themselves, held until exit (:func:`let_go`): without them, a
#: program that lets go of its iterator (``del it``, the last line of
#: `unseen25/input_generator_turbine_vibration`) leaves the step alone nothing to read,
#: and its input wait rested on the trace alone (27% against a truth of 74%)
_HELD = {}  # type: dict
#: the functions whose iterators are held, the latest first called: a program that makes a
#: new function over a new iterator for each fold or run would otherwise keep every one
#: (and its prefetched batches) to the end; two keep a training and an evaluation step's
MAX_HELD_FUNCTIONS = 2


class Refused(Exception):
    """The call cannot be made on a cached batch: the message says why."""


def track(owned_iterator_class):
    """Register each iterator of ``owned_iterator_class`` (tf.data's ``OwnedIterator``) as it
    is made, weakly: a graph that captured one can then be told from its captured inputs."""
    original = owned_iterator_class._create_iterator
    if getattr(original, "_tfres_tracks", False):
        return

    def _create_iterator(self, dataset):
        try:
            return original(self, dataset)
        finally:
            _ITERATORS[id(self)] = self

    _create_iterator._tfres_tracks = True
    owned_iterator_class._create_iterator = _create_iterator


def captures_iterator(function):
    """Whether a traced ``tf.function`` reads a tf.data iterator its graph captured (made
    outside it, ``next(iterator)`` inside): then its loop runs inside each call, as in a
    function handed its iterator (:mod:`_tfres_inside`). False for anything else."""
    try:
        concretes = list(function._list_all_concrete_functions())
    except Exception:  # not a tf.function (an eager loop's optimizer), or an older TF
        return False
    live = _iterators_by_handle()
    found = set(id(c) for f in concretes for c in f.captured_inputs if id(c) in live)
    if found:
        _CAPTURED[id(function)] = found
        if not _HELD:  # registered before the step alone's handler (at the window's
            atexit.register(let_go)  # first call), so it runs after it
        _HELD[id(function)] = [live[handle] for handle in found]
        while len(_HELD) > MAX_HELD_FUNCTIONS:
            del _HELD[next(iter(_HELD))]  # the earliest: dicts keep their insertion order
    return bool(found)


def let_go():
    """Let go of the iterators held for the step alone (:data:`_HELD`), at exit once it has
    been timed, and before TensorFlow's own exit handlers: a ``from_generator`` iterator
    still alive at interpreter shutdown can hang it."""
    _HELD.clear()


def _iterators_by_handle():
    """The program's live tf.data iterators, by id of the resource handle a graph captures."""
    return {id(getattr(it, "_iterator_resource", None)): it for it in list(_ITERATORS.values())}


def on_cached_input(function, call, args, kwargs):
    """``call(function, *args, **kwargs)`` made again with every tf.data iterator or dataset
    it reads replaced by one over a single cached batch of its own (see the module). Returns
    ``(make_call, reads_input)``: a function of no arguments that makes the call, and whether
    the function reads tf.data itself (anything was replaced). Raises :class:`Refused` where
    the call cannot be made on a cached batch."""
    import tensorflow as tf
    from tensorflow.python.data.ops import dataset_ops, iterator_ops
    from tensorflow.python.eager.polymorphic_function import function_type_utils

    leaves = tf.nest.flatten((args, kwargs))
    handed = [
        x for x in leaves if isinstance(x, (iterator_ops.OwnedIterator, dataset_ops.DatasetV2))
    ]
    concrete = function.get_concrete_function(*args, **kwargs)
    captured = list(concrete.captured_inputs)
    held = {id(c) for c in captured}
    live = _iterators_by_handle()
    captured_iterators = [it for handle, it in live.items() if handle in held]
    if (_CAPTURED.get(id(function), set()) & held) - set(
        live
    ):  # called as it is, the call "alone" would read the user's pipeline
        raise Refused("the iterator its graph captured was let go of before exit")
    if not handed and not captured_iterators:
        if any(c.dtype == tf.variant for c in captured):
            raise Refused("the function iterates a dataset it captured")
        return (lambda: call(function, *args, **kwargs)), False
    swapped = {}  # id(the user's iterator or dataset) -> its cached stand-in
    for source in handed + captured_iterators:
        swapped[id(source)] = _stand_in(tf, dataset_ops, source)
    new_args, new_kwargs = tf.nest.map_structure(lambda x: swapped.get(id(x), x), (args, kwargs))
    by_handle = {id(it._iterator_resource): swapped[id(it)] for it in captured_iterators}
    captures = [by_handle[id(c)]._iterator_resource if id(c) in by_handle else c for c in captured]
    bound = function_type_utils.canonicalize_function_inputs(
        new_args, new_kwargs, concrete.function_type
    )
    flat = concrete.function_type.unpack_inputs(bound)

    def make_call():
        return concrete._call_flat(flat, captured_inputs=captures)

    make_call.stand_ins = list(swapped.values())  # they own the resources the call reads
    return make_call, True


def _stand_in(tf, dataset_ops, source):
    """An iterator over one batch of ``source`` (an iterator: its next batch, read from it at
    exit, when the program is done with it), repeated; or, for a dataset, a dataset of its
    first batch repeated as many times as it has batches."""
    spec = source.element_spec
    if isinstance(source, dataset_ops.DatasetV2):
        batches = int(source.cardinality())
        if batches <= 0:
            raise Refused("it is handed a dataset of unknown or infinite length")
        try:
            batch = source.take(1).get_single_element()
        except Exception as err:  # its files are gone, say: the program removed them
            raise Refused("its dataset could not be read again (%s)" % type(err).__name__) from None
        return cached(tf, [batch], spec).take(batches)
    try:
        batch = next(source)
    except StopIteration:
        raise Refused("its iterator was used up") from None
    return iter(cached(tf, [batch], spec))


def dataset(tf, batches):
    """``batches``, one after another, as a dataset."""
    ds = tf.data.Dataset.from_tensors(batches[0])
    for batch in batches[1:]:
        ds = ds.concatenate(tf.data.Dataset.from_tensors(batch))
    return ds


def cached(tf, batches, spec):
    """``batches`` over and over, as a dataset whose element spec is ``spec`` (the iterator's
    the function was traced for: a None batch dimension, say). Re-batching relaxes the batch
    dimension where that is all there is to relax; padded re-batching (to the shapes the
    batch already has) relaxes the others too. Neither traces a function: the step that
    lends its batch stays a step. Shapes that neither gives go through a ``map`` that relaxes
    them. Cached: a call reads the batch as is."""
    ds = dataset(tf, batches)
    if ds.element_spec == spec:
        return ds.repeat()
    leaves = tf.nest.flatten(batches)
    sizes = set(int(t.shape[0]) for t in leaves if t.shape.rank)
    if len(sizes) == 1 and all(t.shape.rank for t in leaves):
        again = _rebatched(tf, ds, sizes.pop(), spec)
        if again is not None and again.element_spec == spec:
            return again.cache().repeat()
    return relaxed(ds, spec, tf).cache().repeat()


def _rebatched(tf, ds, size, spec):
    """``ds``'s batches of ``size`` unbatched and batched again to ``spec``'s shapes, chosen
    before either is built (building one takes 6-9 ms); None where the shapes cannot be."""
    specs = tf.nest.flatten(spec)
    if all(s.shape[0] is None and s.shape[1:].is_fully_defined() for s in specs):
        return ds.unbatch().batch(size)  # only the batch dimension to relax
    try:  # dimensions past the batch, or a batch of known size: padded to what they are
        shapes = tf.nest.map_structure(lambda s: s.shape[1:], spec)
        whole = all(s.shape[0] is not None for s in specs)
        return ds.unbatch().padded_batch(size, shapes, drop_remainder=whole)
    except (TypeError, ValueError):  # shapes the batch cannot take: the map's
        return None


def relaxed(ds, spec, tf):
    """``ds`` with the static shapes of ``spec`` (e.g. a None batch dimension), so the
    function traced for ``spec`` takes its iterator as it is."""

    def relax(*parts):
        flat = tf.nest.flatten(parts)  # map spreads a tuple element over the arguments
        out = [
            tf.compat.v1.placeholder_with_default(t, s.shape)
            for t, s in zip(flat, tf.nest.flatten(spec), strict=True)
        ]
        return tf.nest.pack_sequence_as(spec, out)

    return ds.map(relax)
