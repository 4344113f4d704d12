"""``tfres.callbacks.MemoryBudget``: end training cleanly before host memory runs out."""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from typing import Any

from tfres.budget.watchdog import DEFAULT_SOFT_RATIO, parse_budget
from tfres.budget.watchdog import MemoryBudget as Budget
from tfres.errors import BudgetExceededError
from tfres.units import format_bytes

__all__ = ["MemoryBudget"]

log = logging.getLogger("tfres")


def _callback_base() -> type:
    try:
        import keras
    except ImportError as err:
        from tfres.errors import MissingDependencyError

        raise MissingDependencyError("keras", "the MemoryBudget callback", "cpu") from err
    return keras.callbacks.Callback


class MemoryBudget(_callback_base()):  # type: ignore[misc]
    """Stop ``model.fit`` at the next batch once memory passes the soft threshold.

    ``budget`` is ``"10%"`` (of the RAM, or of the cgroup limit when lower), a size such as
    ``"2GiB"``, a number of bytes, or a :class:`tfres.budget.watchdog.MemoryBudget` from
    :func:`tfres.limit_memory` (then its own thresholds apply, and one made with ``hard=True``
    still raises at the budget itself if memory gets there before the batch ends). A budget
    given as a size is watched from ``on_train_begin`` to ``on_train_end`` with
    ``hard=False``: this callback is what enforces it, gently.

    When the memory of this process tree passes ``soft_ratio`` of the budget, the batch that
    is running finishes, ``model.stop_training`` is set, the model is saved to
    ``checkpoint_path`` (``.keras`` for the whole model, ``.weights.h5`` for weights; written
    to a temporary file and renamed, so a crash never leaves half a checkpoint), and at
    ``on_train_end`` the callback raises :class:`~tfres.errors.BudgetExceededError` with the
    figures (``used_bytes``, ``budget_bytes``). It raises there, not in the batch, so that
    ``fit`` ends its epoch and the other callbacks (loggers, TensorBoard) close their files;
    put this one last so theirs run first. After the error, ``cb.stopped_at`` is
    ``(epoch, batch)`` and ``cb.checkpoint`` the path written (None without a path).

        cb = tfres.callbacks.MemoryBudget("10%", checkpoint_path="ckpt/last.keras")
        model.fit(x, y, epochs=10, callbacks=[cb])
    """

    def __init__(
        self,
        budget: str | int | float | Budget,
        *,
        checkpoint_path: str | os.PathLike[str] | None = None,
        soft_ratio: float = DEFAULT_SOFT_RATIO,
    ) -> None:
        super().__init__()
        if checkpoint_path is not None:
            name = str(checkpoint_path)
            if not (name.endswith(".keras") or name.endswith(".weights.h5")):
                raise ValueError(
                    f"checkpoint_path must end with .keras or .weights.h5 (got {name!r})"
                )
        if not 0 < soft_ratio <= 1:
            raise ValueError(f"soft_ratio must be above 0 and at most 1 (got {soft_ratio!r})")
        self._given = budget if isinstance(budget, Budget) else None
        self._budget_bytes = None if isinstance(budget, Budget) else parse_budget(budget)
        self.soft_ratio = soft_ratio
        self.checkpoint_path = None if checkpoint_path is None else Path(checkpoint_path)
        self.budget: Budget | None = self._given
        self.stopped_at: tuple[int, int] | None = None
        self.checkpoint: Path | None = None
        self._epoch = 0
        self._used_at_stop: int | None = None

    def on_train_begin(self, logs: dict[str, Any] | None = None) -> None:
        self.stopped_at = None
        self.checkpoint = None
        if self._given is None:
            assert self._budget_bytes is not None
            self.budget = Budget(self._budget_bytes, soft_ratio=self.soft_ratio, hard=False).start()

    def on_epoch_begin(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
        self._epoch = epoch

    def on_train_batch_end(self, batch: int, logs: dict[str, Any] | None = None) -> None:
        budget = self.budget
        if budget is None or not budget.exceeded or self.stopped_at is not None:
            return
        self.stopped_at = (self._epoch, batch)
        self._used_at_stop = budget.used_bytes
        self.model.stop_training = True
        log.warning(
            "tfres: memory %s passed %d%% of the %s budget: training stops after epoch %d batch %d",
            format_bytes(budget.used_bytes),
            round(budget.soft_ratio * 100),
            format_bytes(budget.budget_bytes),
            self._epoch,
            batch,
        )
        if self.checkpoint_path is not None:
            self.checkpoint = self._save(self.checkpoint_path)

    def _save(self, path: Path) -> Path:
        """Save the model atomically: a temporary file in the same folder, then a rename."""
        path.parent.mkdir(parents=True, exist_ok=True)
        suffix = ".weights.h5" if path.name.endswith(".weights.h5") else ".keras"
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
        os.close(fd)
        try:
            if suffix == ".keras":
                self.model.save(tmp)
            else:
                self.model.save_weights(tmp)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise
        return path

    def on_train_end(self, logs: dict[str, Any] | None = None) -> None:
        budget = self.budget
        if budget is None:
            return
        if self._given is None:
            budget.stop()
        if self.stopped_at is None:
            return
        used = max(self._used_at_stop or 0, budget.peak_bytes or 0)
        epoch, batch = self.stopped_at
        saved = f"; checkpoint saved to {self.checkpoint}" if self.checkpoint else ""
        raise BudgetExceededError(
            f"memory budget exceeded: {format_bytes(used)} used of the "
            f"{format_bytes(budget.budget_bytes)} budget (soft threshold "
            f"{format_bytes(budget.soft_bytes)}); training stopped after epoch {epoch} batch "
            f"{batch}{saved}",
            used_bytes=used,
            budget_bytes=budget.budget_bytes,
        )
