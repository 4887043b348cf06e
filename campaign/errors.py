"""The engine's exception tree. Only the CLI turns these into messages and exit codes."""

from __future__ import annotations


class CampaignError(Exception):
    """Base of every error the engine raises on purpose."""


class UsageProblem(CampaignError):
    """Bad input from the operator: exit 2, nothing written, nothing started.

    ``option`` names the option at fault so the message can point at it.
    """

    def __init__(self, message: str, option: str | None = None) -> None:
        super().__init__(message)
        self.option = option

    @property
    def reason(self) -> str:
        """The message without the option's name, for a caller that names it (click does)."""
        return super().__str__()

    def __str__(self) -> str:
        text = self.reason
        if self.option and self.option not in text:
            return f"{self.option}: {text}"
        return text


class RerunWith(UsageProblem):
    """Bad input whose fix is certain: this same command with the ``add`` flags added and
    the ``drop`` flags removed. The CLI prints that exact command after the message."""

    def __init__(self, message: str, option: str | None = None, *, add: tuple[str, ...] = (), drop: tuple[str, ...] = ()) -> None:
        super().__init__(message, option)
        self.add, self.drop = add, drop


class StoreError(CampaignError):
    """The store cannot be opened or used as asked."""


class UnreadableValue(StoreError, ValueError):
    """A stored value its column cannot hold (text in a timestamp, a blob in a number):
    the row was edited outside the engine. A ValueError too, so the chain check, which
    names such a row, still catches it."""


class StoreUnusable(UsageProblem, StoreError):
    """``--db`` names something that cannot be opened as a store: bad input, exit 2."""


class SchemaBehind(StoreError):
    """The store's schema is older than this engine's head revision."""


class SchemaAhead(StoreError):
    """The store was written by a newer engine than this one."""


class ReadOnlyViolation(UsageProblem):
    """A statement given to ``campaign sql`` would change the store."""


class UnknownTask(UsageProblem):
    """A task name that is not in the benchmark."""


class ConflictError(CampaignError):
    """A compare-and-set lost: someone else changed the row first."""


class CleanupUnverified(CampaignError):
    """Teardown could not prove every owned process is gone."""


class StopCondition(CampaignError):
    """A stop rule prevents admitting more work (budget, deadline, cleanup)."""

    def __init__(self, reason: str, message: str | None = None) -> None:
        super().__init__(message or reason)
        self.reason = reason


class Interrupted(CampaignError):
    """A stop signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) arrived; the caller persists state and exits 130."""
