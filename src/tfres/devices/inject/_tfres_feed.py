# ruff: noqa: UP004  (child-side: the style of sitecustomize.py, no tfres imports)
"""Which of a custom loop's own statements make the step's input.

A loop may build its batch in its own Python, with no generator or ``__getitem__`` to mark it:

    for step in range(steps):
        xi, y = make_batch(files, step)     # input: it assigns what the step reads
        loss = train_step(xi, y)            # the hot tf.function (or model.train_on_batch)
        history.append(float(loss))         # bookkeeping: the step never reads it

The gap sampler (:mod:`_tfres_pyinput`) records, for each sample that lands in the loop's
frame, the line of that frame it was on. Here each line is mapped to its statement (from the
script's source, with :mod:`ast`), and a statement is input when it assigns a name that the
step's own statement reads, or that another input statement of the same function reads (so
``xs = []`` and ``xs.append(load(f))`` feed ``x = np.stack(xs)``, which feeds the step). The
links come from the source, not from the samples: a gap whose samples all landed in
``xs.append(...)`` still counts them, though none landed in ``np.stack``. Time on the step's
own statement before the call (its arguments being made: ``train_step(*next_batch())``) is
input too, except inside the frames that lead to the hot function (Keras's
``train_on_batch`` preparing its call is the step's cost, as it is without the input).

What counts as assigning a name: a plain assignment or ``for`` target (``x = ...``,
``x, y = ...``, ``x += ...``), an item assignment (``batch["x"] = ...``) and the container
methods that fill a collection in place (``append``, ``extend``, ``insert``, ``update``,
``add``, ``setdefault``, ``put``). Attribute assignments (``self.x = ...``) are not: the
name there is the object, whose other attributes the step may read for other reasons.

Where the source cannot be read (``python -c``, a frozen program) no statement is input.
"""

import ast
import linecache

#: methods that fill a collection in place: ``xs.append(x)`` assigns ``xs``
MUTATORS = frozenset(("append", "extend", "insert", "update", "add", "setdefault", "put"))

_STATEMENTS = {}  # type: dict
_INPUT = {}  # type: dict


def statements(filename):
    """line -> (first line of its statement, names it assigns, names it reads, its scope: the
    function or class it is in, 0 for the module), for the source file ``filename``
    (cached); an empty dict where it cannot be read or parsed."""
    table = _STATEMENTS.get(filename)
    if table is None:
        table = _STATEMENTS[filename] = _parse(filename)
    return table


def input_statements(filename, call_line):
    """The first lines of the statements that make the input of the step called from
    ``call_line``: in the same function, those that assign a name the call's statement
    reads, or that another of them reads (cached; from the source alone, so a statement the
    sampler caught in one gap and not in another still links the two)."""
    key = (filename, call_line)
    found = _INPUT.get(key)
    if found is None:
        found = _INPUT[key] = _input_statements(statements(filename), call_line)
    return found


def _input_statements(table, call_line):
    step = table.get(call_line)
    if step is None:
        return frozenset()
    scope = step[3]
    others = {e[0]: e for e in table.values() if e[3] == scope and e[0] != step[0]}
    found, seeds, grown = set(), set(step[2]), True
    while grown:
        grown = False
        for first, (_, stores, loads, _) in list(others.items()):
            if stores & seeds:
                found.add(first)
                seeds.update(loads)
                del others[first]
                grown = True
    return frozenset(found)


def feeding_seconds(filename, call_line, chain, line_seconds):
    """Seconds of ``line_seconds`` ({(line, code of the frame it was calling, or None):
    seconds}, in the loop's frame) spent making the input of the step called from
    ``call_line`` through the frames whose codes are ``chain``."""
    table = statements(filename)
    step = table.get(call_line)
    if step is None:
        return 0.0
    feeding = input_statements(filename, call_line)
    total = 0.0
    for (line, callee), seconds in line_seconds.items():
        entry = table.get(line)
        if entry is None:
            continue
        if entry[0] == step[0]:
            if callee not in chain:  # making the call's arguments
                total += seconds
        elif entry[0] in feeding:
            total += seconds
    return total


def _parse(filename):
    source = "".join(linecache.getlines(filename))
    if not source:
        return {}
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    table = {}
    _statements(tree, 0, table)
    return table


def _statements(node, scope, table):
    """Fill ``table`` with the statements below ``node``, in ``scope``. A statement is
    added before the ones inside it, so an inner one takes the lines it shares."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            _statements(child, id(child), table)
            continue
        if isinstance(child, ast.stmt):
            _add(child, scope, table)
        _statements(child, scope, table)


def _add(node, scope, table):
    parts = _own_parts(node)
    first = node.lineno
    last = max([first] + [getattr(p, "end_lineno", None) or first for p in parts])
    stores, loads = set(), set()
    for part in parts:
        _names(part, stores, loads)
    for line in range(first, last + 1):
        known = table.get(line)
        if known is not None and known[0] == first:  # a; b on one line: both
            stores |= known[1]
            loads |= known[2]
        table[line] = (first, frozenset(stores), frozenset(loads), scope)


def _own_parts(node):
    """The parts of a statement that run as that statement (a compound statement's header,
    not its body)."""
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return [node.target, node.iter]
    if isinstance(node, (ast.While, ast.If)):
        return [node.test]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [i.context_expr for i in node.items] + [
            i.optional_vars for i in node.items if i.optional_vars is not None
        ]
    if hasattr(node, "subject"):  # match (Python 3.10+): its subject, not its cases
        return [node.subject]
    if hasattr(node, "body"):  # try: the header line alone
        return []
    return [node]


def _names(node, stores, loads):
    if isinstance(node, ast.Name):
        (stores if isinstance(node.ctx, (ast.Store, ast.Del)) else loads).add(node.id)
        return
    if isinstance(node, ast.comprehension):  # its target is the comprehension's own
        _names(node.iter, stores, loads)
        for test in node.ifs:
            _names(test, stores, loads)
        return
    if isinstance(node, ast.Lambda):
        _names(node.body, stores, loads)
        return
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
        base = _base_name(node.value)
        if base is not None:
            stores.add(base)
    elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        loads.add(node.target.id)  # x += 1 reads x too
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in MUTATORS
        and isinstance(node.func.value, ast.Name)
    ):
        stores.add(node.func.value.id)
    for child in ast.iter_child_nodes(node):
        _names(child, stores, loads)


def _base_name(node):
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None
