"""Why a request was refused: the one error every action, view and socket reports to its sender."""

from __future__ import annotations

from typing import Any

from django.utils.translation import override

from games.engine import PochaError


class ActionError(Exception):
    """Why a request was refused.  Nothing was changed.  ``resync``: the sender's page is stale."""

    def __init__(
        self,
        code: str,
        message: Any = None,
        *,
        es: str | None = None,
        en: str | None = None,
        resync: bool = False,
        params: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(code)
        self.code = code
        #: Filled into the message in the reader's language (``%(name)s`` placeholders).
        self.params = params
        self._message = message
        self._es = es
        self._en = en
        self.resync = resync

    @classmethod
    def from_engine(cls, error: PochaError) -> ActionError:
        return cls(error.rule, es=error.es, en=error.en)

    def message(self, language: str = "es") -> str:
        if self._es is not None and self._en is not None:
            return self._es if language.startswith("es") else self._en
        with override(language):
            text = str(self._message)
            return text % self.params if self.params else text

    def __str__(self) -> str:
        return f"{self.code}: {self.message('en')}"
