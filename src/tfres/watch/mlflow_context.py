"""How tfres finds the MLflow run a watched script makes itself (``mlflow.start_run()``, autolog).

MLflow asks every installed *run context provider* (entry point group
``mlflow.run_context_provider``) for tags when a run is created. Under ``tfres run --mlflow``
the command gets ``$TFRES_MLFLOW_SESSION``; under ``tfres.monitor(mlflow=...)`` the block's
session is kept here while it runs. Either way, a run the script makes is tagged
``tfres.session=<token>``, and tfres joins that run instead of keeping one of its own.
This module imports nothing: MLflow loads it in every process where tfres is installed.
"""

from __future__ import annotations

import os

__all__ = ["SESSION_ENV", "SESSION_TAG", "TfresRunContext", "open_session", "close_session"]

#: the variable ``tfres run --mlflow`` sets for the command
SESSION_ENV = "TFRES_MLFLOW_SESSION"
#: the tag a run created under tfres gets
SESSION_TAG = "tfres.session"

#: the sessions of ``tfres.monitor(mlflow=...)`` blocks running in this process, newest last
_open: list[str] = []


def open_session(token: str) -> None:
    """Tag the MLflow runs this process makes from now on with ``token``."""
    _open.append(token)


def close_session(token: str) -> None:
    if token in _open:
        _open.remove(token)


def current_session() -> str | None:
    """The token a new run made now would be tagged with (None outside tfres)."""
    if _open:
        return _open[-1]
    return os.environ.get(SESSION_ENV) or None


class TfresRunContext:
    """MLflow run context provider: ``tfres.session`` on runs made while tfres watches."""

    def in_context(self) -> bool:
        return current_session() is not None

    def tags(self) -> dict[str, str]:
        token = current_session()
        return {SESSION_TAG: token} if token else {}
