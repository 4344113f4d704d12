"""The folder ``tfres run`` puts first on a child's PYTHONPATH (see :mod:`tfres.child_env`).

Only :mod:`tfres._inject.sitecustomize` matters; it runs in the child, standalone.
"""
