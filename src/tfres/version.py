"""The tfres version: one place, read by the package, the records and ``pyproject.toml``.

It imports nothing, so the data layer (records, fingerprints) can stamp its version
without importing the public API of ``tfres/__init__.py`` above it.
"""

__version__ = "0.1.0"
