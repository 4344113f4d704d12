"""Code under watch: a block of Python (:mod:`.monitor`), a whole command (:mod:`.command`, what
``tfres run`` calls), and what goes with them: the live dashboard, step timing, Prometheus.
"""
