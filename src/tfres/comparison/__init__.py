"""Why two runs or machines differ (``tfres compare``).

:mod:`.compare` pairs the workloads and ratios, :mod:`.environment` diffs the machines,
:mod:`.explanation` writes the explanation in words.
"""
