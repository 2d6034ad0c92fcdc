"""The errors of the library: ValueError subclasses carrying the extension's SQLSTATE."""

from __future__ import annotations

__all__ = ["SubsettingError", "LimitExceededError", "RingFormatError", "LayoutError", "KeyOutOfRangeError",
           "KeySyntaxError", "NoPartitionError"]


class SubsettingError(ValueError):
    """A bad argument, as the extension refuses it (SQLSTATE 22023 unless said otherwise).

    ``sqlstate`` is the SQLSTATE the extension raises for the same argument,
    so that an application can treat both alike.
    """

    sqlstate = "22023"

    def __init__(self, message: str, *, detail: str | None = None, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail
        self.hint = hint

    def __str__(self) -> str:
        text = self.message
        if self.detail:
            text += "\nDETAIL: " + self.detail
        if self.hint:
            text += "\nHINT: " + self.hint
        return text


class LimitExceededError(SubsettingError):
    """A request beyond the extension's limits (SQLSTATE 54000)."""

    sqlstate = "54000"


class RingFormatError(SubsettingError):
    """A malformed partition ring text (SQLSTATE 22P02, as the ``partition_ring`` input)."""

    sqlstate = "22P02"


class LayoutError(SubsettingError):
    """A document that is not one of ``routing_layout(parent)`` given to ``Router`` (SQLSTATE 22023)."""

    sqlstate = "22023"


class KeyOutOfRangeError(SubsettingError):
    """A key beyond its type's range given to ``Router.route`` (SQLSTATE 22003, as SQL's
    "out of range" for a smallint, integer or bigint)."""

    sqlstate = "22003"


class KeySyntaxError(SubsettingError):
    """A key given as text that its type cannot read, a malformed uuid (SQLSTATE 22P02, as SQL's
    "invalid input syntax")."""

    sqlstate = "22P02"


class NoPartitionError(SubsettingError):
    """A key whose bucket no partition of the layout holds (SQLSTATE 23514, as PostgreSQL's
    "no partition of relation ... found for row")."""

    sqlstate = "23514"
