"""Where work should run: the placement advisor (:mod:`.advisor`), overlapped input pipelines
(:mod:`.pipeline`) and the distribution strategy (:mod:`.strategy`).
"""
