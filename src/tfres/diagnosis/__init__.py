"""What holds a run back: facts of a record (:mod:`.facts`) -> rules (:mod:`.rules`) -> findings
(:mod:`.diagnose`).
"""
