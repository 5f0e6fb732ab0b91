"""Typed errors raised by the engine.  Every message exists in Spanish and English."""

from __future__ import annotations


class PochaError(ValueError):
    """Base class: something was asked of the engine that the rules do not allow.

    ``rule`` is a short stable code (``montar``, ``not_your_turn``...), ``es`` and
    ``en`` say in words which rule was broken.  ``str(error)`` is the English text.
    """

    kind: str = "error"

    def __init__(self, rule: str, es: str, en: str) -> None:
        super().__init__(en)
        self.rule = rule
        self.es = es
        self.en = en

    def message(self, language: str = "en") -> str:
        """The message in ``language`` (``es`` or ``en``; anything else gives English)."""
        return self.es if language.startswith("es") else self.en


class IllegalActionError(PochaError):
    """An action that is not legal now: wrong turn, wrong phase, or against a rule of play."""

    kind = "action"


class IllegalBidError(IllegalActionError):
    kind = "bid"


class IllegalTrumpError(IllegalActionError):
    kind = "trump"


class IllegalPlayError(IllegalActionError):
    kind = "play"


class IllegalDealError(PochaError):
    """Hands or trump card that cannot come from a deal of this round."""

    kind = "deal"
