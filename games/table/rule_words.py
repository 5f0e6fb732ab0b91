"""The engine's refusals in words, for players: one short sentence per rule code, in their language.

The engine (``games.engine``) says which rule was broken as a code and its parameters
(``must_follow_suit`` with ``{"suit": "o", ...}``); this module words it through Django's
translation catalogue (the Spanish text is the msgid, ``locale/en`` has the English).  Suits and
cards are named in the reader's language, never as codes, and the cards that may be played
instead (the ``legal`` parameter, for records and bots) are left out: the page shows them.

>>> from games.engine import IllegalPlayError
>>> sentence(IllegalPlayError(Rule.MUST_FOLLOW_SUIT, {"suit": "b", "trump": "o", "legal": "7b"}), "es")
'debes asistir: juega bastos'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache

from django.utils.translation import gettext as _
from django.utils.translation import ngettext, override

from games.engine import Card, PochaError, Suit
from games.engine.errors import Param, Rule

__all__ = ["LANGUAGES", "card_words", "sentence", "sentence_for", "suit_words"]

#: The languages the sentences are written in; any other reads English.
LANGUAGES = ("es", "en")


def _language(language: str | None) -> str:
    return "es" if (language or "").lower().startswith("es") else "en"


def suit_words(letter: Param, language: str) -> str:
    """A suit letter (``"b"``) as players say it: ``bastos``, ``clubs``.  ValueError if not a suit."""
    suit = Suit.parse(str(letter))
    return suit.name_es if _language(language) == "es" else suit.name_en


def card_words(code: Param, language: str) -> str:
    """A card code (``"10b"``) as players say it, with its article: ``la sota de bastos``,
    ``the jack of clubs``.  ValueError if not a card."""
    card = Card.parse(str(code))
    if _language(language) == "es":
        return f"{'la' if card.rank == 10 else 'el'} {card.name_es}"  # la sota; el as, el caballo, el rey, el 7
    return f"the {card.name_en}"


def _int(value: Param) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"not a whole number: {value!r}")
    return value


# Each code's sentence, made when it is asked for (so in the active language).  A parameter that
# is missing or of the wrong kind raises KeyError/ValueError/TypeError: the generic sentence is said.
_Words = Callable[[Mapping[str, Param], str], str]


def _must_beat(params: Mapping[str, Param], language: str) -> str:
    suit = Suit.parse(str(params["suit"]))
    if suit.value == params.get("trump"):
        return _("debes montar: juega un triunfo más alto")
    by_suit = {
        Suit.OROS: _("debes montar: juega un oro más alto"),
        Suit.COPAS: _("debes montar: juega una copa más alta"),
        Suit.ESPADAS: _("debes montar: juega una espada más alta"),
        Suit.BASTOS: _("debes montar: juega un basto más alto"),
    }
    return by_suit[suit]


def _hand_size(params: Mapping[str, Param], language: str) -> str:
    n = _int(params["n"])
    return ngettext(
        "el asiento %(seat)s debe tener %(n)s carta, tiene %(got)s",
        "el asiento %(seat)s debe tener %(n)s cartas, tiene %(got)s",
        n,
    ) % {"seat": _int(params["seat"]), "n": n, "got": _int(params["got"])}


_SENTENCES: dict[str, _Words] = {
    # whose turn, and what may be done now
    Rule.NO_TURN: lambda p, lang: _("ahora no le toca jugar a nadie"),
    Rule.NOT_YOUR_TURN: lambda p, lang: _("no es tu turno"),
    Rule.NOT_DEALING: lambda p, lang: _("no es momento de repartir"),
    Rule.GAME_OVER: lambda p, lang: _("la partida ha terminado"),
    Rule.UNKNOWN_ACTION: lambda p, lang: _("acción desconocida"),
    # bids
    Rule.NOT_BIDDING: lambda p, lang: _("ahora no se canta"),
    Rule.BID_RANGE: lambda p, lang: _("el pedido debe ser de 0 a %(max)s") % {"max": _int(p["max"])},
    Rule.LAST_BIDDER_SUM: lambda p, lang: (
        _("eres el último en cantar: la suma de los pedidos no puede ser %(n)s, no puedes pedir %(bid)s")
        % {"n": _int(p["n"]), "bid": _int(p["bid"])}
    ),
    # trump
    Rule.NOT_CHOOSING_TRUMP: lambda p, lang: _("ahora no se elige triunfo"),
    Rule.NOT_A_SUIT: lambda p, lang: _("eso no es un palo"),
    # cards
    Rule.NOT_PLAYING_CARDS: lambda p, lang: _("ahora no se juegan cartas"),
    Rule.NOT_IN_HAND: lambda p, lang: _("no tienes %(card)s") % {"card": card_words(p["card"], lang)},
    Rule.MUST_FOLLOW_SUIT: lambda p, lang: _("debes asistir: juega %(suit)s") % {"suit": suit_words(p["suit"], lang)},
    Rule.MUST_BEAT: _must_beat,
    Rule.MUST_TRUMP: lambda p, lang: (
        _("no tienes %(suit)s: debes fallar con triunfo") % {"suit": suit_words(p["suit"], lang)}
    ),
    Rule.MUST_OVERTRUMP: lambda p, lang: _("debes contrafallar: juega un triunfo más alto"),
    Rule.CANNOT_PLAY: lambda p, lang: _("no puedes jugar %(card)s") % {"card": card_words(p["card"], lang)},
    # deals (a record, or hands given to the engine, that no deal could give)
    Rule.HAND_COUNT: lambda p, lang: (
        _("hacen falta %(n)s manos, hay %(got)s") % {"n": _int(p["n"]), "got": _int(p["got"])}
    ),
    Rule.HAND_SIZE: _hand_size,
    Rule.NOT_IN_DECK: lambda p, lang: (
        _("%(card)s no está en la baraja de %(players)s jugadores")
        % {"card": card_words(p["card"], lang), "players": _int(p["players"])}
    ),
    Rule.DUPLICATE_CARD: lambda p, lang: (
        _("%(card)s se ha repartido dos veces") % {"card": card_words(p["card"], lang)}
    ),
    Rule.AUCTION_TRUMP_CARD: lambda p, lang: _("en las subastas no se pinta triunfo"),
    Rule.NO_CARD_TURNED: lambda p, lang: _("en las rondas de oros no se pinta triunfo: pintan oros"),
    Rule.NO_TRUMP_CARD: lambda p, lang: _("falta la carta de triunfo"),
    Rule.TRUMP_NOT_LAST_DEALT: lambda p, lang: (
        _("el triunfo, %(card)s, debe ser la última carta repartida, la del asiento %(seat)s")
        % {"card": card_words(p["card"], lang), "seat": _int(p["seat"])}
    ),
    Rule.TRUMP_IN_HAND: lambda p, lang: (
        _("la carta de triunfo, %(card)s, está en una mano") % {"card": card_words(p["card"], lang)}
    ),
}

#: The codes worded here (every code of ``games.engine.errors.Rule``: a test checks it).
CODES: frozenset[str] = frozenset(str(code) for code in _SENTENCES)


def _generic() -> str:
    return _("esa jugada no está permitida")


def sentence_for(code: str, params: Mapping[str, Param] | None, language: str) -> str:
    """The rule ``code`` with ``params`` as one short sentence in ``language`` (``es``; anything
    else reads English).  An unknown code, or parameters it cannot use, give a generic sentence."""
    language = _language(language)
    words = _SENTENCES.get(str(code))
    with override(language):
        if words is None:
            return _generic()
        try:
            return words(params or {}, language)
        except (KeyError, ValueError, TypeError):
            return _generic()


def sentence(error: PochaError, language: str) -> str:
    """Why the engine refused: ``error`` (its code and parameters) in words, in ``language``.

    ``sentence(error, "es")`` -> «debes asistir: juega bastos»; ``"en"`` -> "you must follow suit: play clubs"."""
    params = tuple(sorted((error.params or {}).items()))
    try:
        return _kept_sentence(str(error.code), params, language)
    except TypeError:  # (a parameter that is not a plain value: worded afresh)
        return sentence_for(error.code, error.params, language)


@lru_cache(maxsize=1024)
def _kept_sentence(code: str, params: tuple[tuple[str, Param], ...], language: str) -> str:
    """``sentence_for``, worded once per refusal and language: a board words why each card of a hand cannot be
    played, for every viewer at every move, and the same few refusals come back all game."""
    return sentence_for(code, dict(params), language)
