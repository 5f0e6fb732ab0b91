"""Why a request was refused: the one error every action, view and socket reports to its sender."""

from __future__ import annotations

from typing import Any

from django.utils.translation import override

from games.engine import PochaError
from games.table import rule_words


class ActionError(Exception):
    """Why a request was refused.  Nothing was changed.  ``resync``: the sender's page is stale.

    ``message``: a translatable text (``gettext_lazy``) with ``%(name)s`` placeholders for ``params``; an
    error of the engine's (``from_engine``) is worded from its rule code instead (``games.table.rule_words``)."""

    def __init__(
        self,
        code: str,
        message: Any = None,
        *,
        resync: bool = False,
        params: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(code)
        self.code = code
        self.params = params
        self.resync = resync
        self._message = message
        self._engine_error: PochaError | None = None

    @classmethod
    def from_engine(cls, error: PochaError) -> ActionError:
        refused = cls(str(error.code))
        refused._engine_error = error
        return refused

    def message(self, language: str = "es") -> str:
        """The reason in ``language``."""
        if self._engine_error is not None:
            return rule_words.sentence(self._engine_error, language)
        with override(language):
            text = str(self._message)
            return text % self.params if self.params else text

    def __str__(self) -> str:
        return f"{self.code}: {self.message('en')}"
