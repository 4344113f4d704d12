"""The folder ``tfres run`` puts first on a child's PYTHONPATH (see :mod:`tfres.devices.child_env`).

Only :mod:`tfres.devices.inject.sitecustomize` matters; it runs in the child, standalone.
"""
