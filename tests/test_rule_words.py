"""games.table.rule_words: every refusal of the engine (a rule code and its parameters) as a sentence for players,
in Spanish and in English, with suits and cards named in words and never as codes."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from django.utils import translation

from games.engine import (
    Bid,
    Card,
    ChooseTrump,
    GameState,
    IllegalActionError,
    IllegalPlayError,
    Phase,
    Play,
    PochaError,
    Rule,
    Suit,
    default_action,
)
from games.engine.errors import CODES
from games.engine.presets import Rules
from games.engine.rules import check_deal, explain_illegal
from games.engine.schedule import RoundKind, schedule
from games.table import rule_words

CARD_CODE = re.compile(r"\b(?:1[012]|[1-7])[ocebOCEB]\b")


def cs(text: str) -> list[Card]:
    return [Card.parse(t) for t in text.split()]


def refusal(attempt: Callable[[], object]) -> PochaError:
    with pytest.raises(PochaError) as info:
        attempt()
    return info.value


def round_one() -> GameState:
    """Four seats, round 1 (one card each), dealer 0: seats 1, 2, 3 and 0 bid in that order."""
    game = GameState(4, 0)
    game.deal([cs("11e"), cs("1e"), cs("3e"), cs("12e")], Card.parse("7c"))
    return game


def choosing_trump() -> GameState:
    game = GameState.new(4, seed=3)
    while game.phase is not Phase.CHOOSING_TRUMP:
        if game.phase is Phase.ROUND_OVER:
            game.deal()
        else:
            game.apply(default_action(game))
    return game


def after_bids(*bids: int) -> GameState:
    game = round_one()
    for amount in bids:
        game.apply(Bid(amount))
    return game


def round_over() -> GameState:
    game = after_bids(0, 0, 0, 0)
    while game.phase is Phase.PLAYING:
        game.apply(default_action(game))
    assert game.phase is Phase.ROUND_OVER
    return game


SPEC2 = schedule(4)[1]  # round 2 at four seats; with dealer 1, seats 2, 3, 0, 1 get the cards in that order
GOOD2 = [cs("1o 3o"), cs("12o 11o"), cs("10o 7o"), cs("6o 5o")]
EIGHT = schedule(4)[7]  # 8 cards: the last card dealt marks trump
AUCTION = schedule(4)[8]


INDIAS = Rules.of("indias")
OROS_ROUND = next(spec for spec in INDIAS.schedule(3) if spec.kind is RoundKind.OROS)  # 13 cards, trump oros


def thirteen_card_deal() -> list[list[Card]]:
    deck = list(INDIAS.deck(3))
    return [deck[i * 13 : (i + 1) * 13] for i in range(3)]


def eight_card_deal() -> list[list[Card]]:
    deck = cs(" ".join(f"{rank}{suit}" for suit in "oceb" for rank in (1, 3, 5, 6, 7, 10, 11, 12)))
    return [deck[i * 8 : (i + 1) * 8] for i in range(4)]


# How the engine comes to raise each code, for real (two are never raised in play: built by hand).
SCENARIOS: dict[Rule, Callable[[], PochaError]] = {
    Rule.NO_TURN: lambda: refusal(lambda: round_over().apply(Bid(0))),
    Rule.NOT_YOUR_TURN: lambda: refusal(lambda: round_one().apply(Bid(0), seat=2)),
    Rule.NOT_DEALING: lambda: refusal(lambda: round_one().deal()),
    Rule.GAME_OVER: lambda: IllegalActionError(Rule.GAME_OVER),
    Rule.UNKNOWN_ACTION: lambda: refusal(lambda: round_one().check("pasar")),  # type: ignore[arg-type]
    Rule.NOT_BIDDING: lambda: refusal(lambda: after_bids(0, 0, 0, 0).apply(Bid(0))),
    Rule.BID_RANGE: lambda: refusal(lambda: round_one().apply(Bid(2))),
    Rule.LAST_BIDDER_SUM: lambda: refusal(lambda: after_bids(0, 0, 0).apply(Bid(1))),
    Rule.NOT_CHOOSING_TRUMP: lambda: refusal(lambda: round_one().apply(ChooseTrump(Suit.OROS))),
    Rule.NOT_A_SUIT: lambda: refusal(lambda: choosing_trump().apply(ChooseTrump("o"))),  # type: ignore[arg-type]
    Rule.NOT_PLAYING_CARDS: lambda: refusal(lambda: round_one().apply(Play(Card.parse("1e")))),
    Rule.NOT_IN_HAND: lambda: explain_illegal(Card.parse("10b"), cs("1o 3c"), [], Suit.OROS),
    Rule.MUST_FOLLOW_SUIT: lambda: explain_illegal(Card.parse("1e"), cs("3b 1e"), cs("7b"), Suit.OROS),
    Rule.MUST_BEAT: lambda: explain_illegal(Card.parse("5c"), cs("10c 5c"), cs("7c"), Suit.OROS),
    Rule.MUST_TRUMP: lambda: explain_illegal(Card.parse("1e"), cs("5o 1e"), cs("7c"), Suit.OROS),
    Rule.MUST_OVERTRUMP: lambda: explain_illegal(Card.parse("5o"), cs("10o 5o"), cs("7c 6o"), Suit.OROS),
    Rule.CANNOT_PLAY: lambda: IllegalPlayError(Rule.CANNOT_PLAY, {"card": "3c"}),
    Rule.HAND_COUNT: lambda: refusal(lambda: check_deal(4, SPEC2, 1, GOOD2[:3], Card.parse("1c"))),
    Rule.HAND_SIZE: lambda: refusal(lambda: check_deal(4, SPEC2, 1, [cs("1o"), *GOOD2[1:]], Card.parse("1c"))),
    Rule.NOT_IN_DECK: lambda: refusal(lambda: check_deal(4, SPEC2, 1, [cs("1o 2o"), *GOOD2[1:]], Card.parse("1c"))),
    Rule.DUPLICATE_CARD: lambda: refusal(lambda: check_deal(4, SPEC2, 1, [cs("1o 12o"), *GOOD2[1:]], Card.parse("1c"))),
    Rule.AUCTION_TRUMP_CARD: lambda: refusal(lambda: check_deal(4, AUCTION, 0, eight_card_deal(), Card.parse("1o"))),
    Rule.NO_CARD_TURNED: lambda: refusal(
        lambda: check_deal(3, OROS_ROUND, 0, thirteen_card_deal(), Card.parse("7c"), INDIAS)
    ),
    Rule.NO_TRUMP_CARD: lambda: refusal(lambda: check_deal(4, SPEC2, 1, GOOD2, None)),
    Rule.TRUMP_NOT_LAST_DEALT: lambda: refusal(lambda: check_deal(4, EIGHT, 0, eight_card_deal(), Card.parse("1c"))),
    Rule.TRUMP_IN_HAND: lambda: refusal(lambda: check_deal(4, SPEC2, 1, GOOD2, Card.parse("12o"))),
}


def test_the_scenarios_cover_every_code_of_the_engine() -> None:
    assert set(SCENARIOS) == set(Rule)
    assert {rule.value for rule in Rule} == CODES
    assert rule_words.CODES == CODES, "a code the engine can raise has no sentence (or a sentence has no code)"


@pytest.mark.parametrize("rule", list(Rule), ids=str)
def test_every_code_the_engine_raises_has_a_sentence_in_spanish_and_in_english(rule: Rule) -> None:
    error = SCENARIOS[rule]()
    assert isinstance(error, PochaError) and error.code is rule
    assert all(type(value) in (str, int) for value in error.params.values()), "parameters are plain values"
    es, en = rule_words.sentence(error, "es"), rule_words.sentence(error, "en")
    generic = {rule_words.sentence_for("no_such_rule", {}, lang) for lang in ("es", "en")}
    for text in (es, en):
        assert text and text not in generic, f"{rule}: the engine's parameters did not fit its sentence"
        assert "%(" not in text and "(" not in text, text
        assert not CARD_CODE.search(text), f"a card code in a sentence for people: {text!r}"
        assert rule.value not in text
    assert es != en, f"{rule} has no English in the compiled catalogue"


def test_sentences_in_spanish() -> None:
    say = rule_words.sentence_for
    assert say("must_follow_suit", {"suit": "b", "trump": "o", "legal": "7b 1b"}, "es") == "debes asistir: juega bastos"
    assert say("must_beat", {"suit": "c", "trump": "o", "legal": "3c"}, "es") == "debes montar: juega una copa más alta"
    assert say("must_beat", {"suit": "o", "trump": "e", "legal": "3o"}, "es") == "debes montar: juega un oro más alto"
    assert (
        say("must_beat", {"suit": "o", "trump": "o", "legal": "3o"}, "es") == "debes montar: juega un triunfo más alto"
    )
    assert (
        say("must_trump", {"suit": "e", "trump": "o", "legal": "5o"}, "es")
        == "no tienes espadas: debes fallar con triunfo"
    )
    assert say("not_in_hand", {"card": "1o"}, "es") == "no tienes el as de oros"
    assert say("not_in_hand", {"card": "10b"}, "es") == "no tienes la sota de bastos"
    assert say("not_your_turn", {"seat": 2, "turn": 1}, "es") == "no es tu turno"
    assert say("bid_range", {"max": 1}, "es") == "el pedido debe ser de 0 a 1"
    assert (
        say("last_bidder_sum", {"n": 3, "bid": 1}, "es")
        == "eres el último en cantar: la suma de los pedidos no puede ser 3, no puedes pedir 1"
    )
    assert say("hand_size", {"seat": 2, "n": 1, "got": 0}, "es") == "el asiento 2 debe tener 1 carta, tiene 0"
    assert say("hand_size", {"seat": 2, "n": 3, "got": 2}, "es") == "el asiento 2 debe tener 3 cartas, tiene 2"


def test_sentences_in_english() -> None:
    say = rule_words.sentence_for
    assert (
        say("must_follow_suit", {"suit": "b", "trump": "o", "legal": "7b"}, "en") == "you must follow suit: play clubs"
    )
    assert say("must_beat", {"suit": "c", "trump": "o", "legal": "3c"}, "en") == "you must play a higher card of cups"
    assert (
        say("must_overtrump", {"suit": "c", "trump": "o", "legal": "3o"}, "en")
        == "you must overtrump: play a higher trump"
    )
    assert (
        say("must_trump", {"suit": "e", "trump": "o", "legal": "5o"}, "en")
        == "you have no swords: you must play a trump"
    )
    assert say("not_in_hand", {"card": "10b"}, "en") == "you do not hold the jack of clubs"
    assert say("not_your_turn", {"seat": 2, "turn": 1}, "en") == "it is not your turn"
    assert (
        say("last_bidder_sum", {"n": 3, "bid": 1}, "en")
        == "you bid last: the bids may not add up to 3, so you may not bid 1"
    )
    assert say("hand_size", {"seat": 2, "n": 1, "got": 0}, "en") == "seat 2 must hold 1 card, it holds 0"


def test_a_raised_error_reads_the_same_as_its_code_and_parameters() -> None:
    game = after_bids(0, 0, 0)
    with pytest.raises(PochaError) as info:
        game.apply(Bid(1))
    error = info.value
    for language in ("es", "en"):
        assert rule_words.sentence(error, language) == rule_words.sentence_for(error.code, error.params, language)
    assert rule_words.sentence(error, "es").startswith("eres el último en cantar")


def test_languages_are_read_by_prefix_and_anything_else_reads_english() -> None:
    error = explain_illegal(Card.parse("1e"), cs("3b 1e"), cs("7b"), Suit.OROS)
    assert error is not None
    assert rule_words.sentence(error, "es-ES") == rule_words.sentence(error, "es") == "debes asistir: juega bastos"
    assert rule_words.sentence(error, "en-GB") == rule_words.sentence(error, "fr") == "you must follow suit: play clubs"


def test_an_unknown_code_or_unfit_parameters_give_a_generic_sentence() -> None:
    say = rule_words.sentence_for
    assert say("a_rule_from_the_future", {"x": 1}, "es") == "esa jugada no está permitida"
    assert say("a_rule_from_the_future", None, "en") == "that move is not allowed"
    assert say("", {}, "es") == "esa jugada no está permitida"
    # a parameter missing, or not of its kind: never an exception, never a half-filled sentence
    assert say("must_follow_suit", {}, "es") == "esa jugada no está permitida"
    assert say("must_follow_suit", {"suit": "x"}, "en") == "that move is not allowed"
    assert say("not_in_hand", {"card": "13o"}, "es") == "esa jugada no está permitida"
    assert say("bid_range", {"max": "tres"}, "en") == "that move is not allowed"
    assert say("bid_range", {"max": True}, "es") == "esa jugada no está permitida"


def test_the_active_language_is_left_as_it_was() -> None:
    error = explain_illegal(Card.parse("1e"), cs("3b 1e"), cs("7b"), Suit.OROS)
    assert error is not None
    with translation.override("es"):
        assert rule_words.sentence(error, "en") == "you must follow suit: play clubs"
        assert translation.get_language() == "es"
    with translation.override("en"):
        assert rule_words.sentence(error, "es") == "debes asistir: juega bastos"
        assert translation.get_language() == "en"


def test_suits_and_cards_in_words() -> None:
    assert rule_words.suit_words("o", "es") == "oros" and rule_words.suit_words("o", "en") == "coins"
    assert rule_words.card_words("12c", "es") == "el rey de copas"
    assert rule_words.card_words("3e", "en") == "the 3 of swords"
    with pytest.raises(ValueError):
        rule_words.card_words("0o", "es")


def test_a_refusal_is_worded_the_same_kept_or_afresh_and_in_each_language() -> None:
    """``sentence`` keeps each refusal's words per language (a board words a hand's refusals at every move):
    the kept words are ``sentence_for``'s, in the language asked for, and a parameter that is not a plain
    value is still worded."""
    from games.engine import IllegalPlayError
    from games.table.rule_words import sentence, sentence_for

    error = IllegalPlayError(Rule.MUST_FOLLOW_SUIT, {"suit": "b", "trump": "o", "legal": "7b"})
    for _ in range(2):
        assert sentence(error, "es") == sentence_for(error.code, error.params, "es") == "debes asistir: juega bastos"
        assert (
            sentence(error, "en") == sentence_for(error.code, error.params, "en") == "you must follow suit: play clubs"
        )
    odd = IllegalPlayError(Rule.MUST_FOLLOW_SUIT, {"suit": "b", "legal": ["7b"]})  # type: ignore[dict-item]
    assert sentence(odd, "es") == sentence_for(odd.code, odd.params, "es")
