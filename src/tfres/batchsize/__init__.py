"""The batch-size finder: the largest batch that trains within a memory budget
(``tfres batch-size``).

:mod:`.finder` runs the search, :mod:`.search` chooses the next size, :mod:`.trial` is one
trial in a process of its own.
"""
