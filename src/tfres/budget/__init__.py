"""Host-memory budgets: TensorFlow has no host-memory cap, so tfres holds one.

:mod:`.watchdog` watches this process or another (``tfres.limit_memory``); :mod:`.command`
holds the budget of a command under ``tfres run --memory-budget``.
"""
