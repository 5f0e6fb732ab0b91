"""What may be played (asistir, montar, fallar, contrafallar) and who takes the trick."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.engine import ALL_CARDS, IllegalPlayError, Phase, Play, Rule, Suit, legal_plays, trick_winner
from games.engine.rules import explain_illegal

from .helpers import c, cs, position

O, C, E, B = Suit.OROS, Suit.COPAS, Suit.ESPADAS, Suit.BASTOS  # noqa: E741 (the suits by initial)


def legal(hand, trick, trump):
    return {str(card) for card in legal_plays(cs(hand), cs(trick), trump)}


def round3(hands, trump_card="7o", plays=()):
    """Round 3 at four seats (three cards each), everyone bids 1, then ``plays``."""
    return position(4, 3, hands, trump_card, bids=[1, 0, 1, 0], plays=plays)


def assert_rejected(game, card, rule):
    """The checked path refuses ``card`` with the code ``rule`` and plain parameters, and changes nothing."""
    before = ([list(h) for h in game.hands], list(game.trick), game.turn)
    with pytest.raises(IllegalPlayError) as info:
        game.apply(Play(c(card)))
    error = info.value
    assert error.code == rule and error.code is Rule(rule)
    if rule == "not_in_hand":
        assert dict(error.params) == {"card": card}
    else:
        led, trump = game.trick[0].card.suit, game.trump_suit
        assert dict(error.params) == {
            "suit": led.value,
            "trump": trump.value,
            "legal": " ".join(str(x) for x in legal_plays(game.hands[game.turn], [p.card for p in game.trick], trump)),
        }
    assert str(error).startswith(rule)
    assert ([list(h) for h in game.hands], list(game.trick), game.turn) == before
    return error


def assert_accepted(game, card):
    copy = game.copy()
    copy.apply(Play(c(card)))
    assert c(card) not in copy.hands[game.turn]


def test_leader_may_play_any_card():
    assert legal("1o 7c 5e", "", O) == {"1o", "7c", "5e"}
    game = round3(["1o 7c 5e", "3c 1e 5b", "10c 5c 12e", "6c 12b 11b"])
    assert {str(a.card) for a in game.legal_actions()} == {"1o", "7c", "5e"}


def test_asistir_must_follow_the_suit_led():
    assert legal("3c 1e 5b", "7c", O) == {"3c"}
    game = round3(["7c 1o 5e", "3c 1e 5b", "10c 5c 12e", "6c 12b 11b"], plays=["7c"])
    assert_rejected(game, "1e", "must_follow_suit")
    assert_rejected(game, "5b", "must_follow_suit")
    assert_accepted(game, "3c")


def test_montar_must_beat_the_highest_card_of_the_suit_led():
    assert legal("10c 5c 1e", "7c", O) == {"10c"}
    assert legal("10c 5c 1c", "7c 11c", O) == {"1c"}  # the highest on the table, not the led card
    game = round3(["7c 1o 5e", "10c 5c 1e", "3c 6c 12e", "12c 12b 11b"], plays=["7c"])
    error = assert_rejected(game, "5c", "must_beat")
    assert error.params["legal"] == "10c" and error.params["suit"] == "c"
    assert error.describe() == "must beat the highest card: play a higher card of cups (10c)"
    assert_rejected(game, "1e", "must_follow_suit")
    assert_accepted(game, "10c")


def test_cannot_beat_then_any_card_of_the_suit():
    assert legal("5c 10c 1e", "1c", O) == {"5c", "10c"}
    game = round3(["1c 1o 5e", "5c 10c 1e", "3c 6c 12e", "12c 12b 11b"], plays=["1c"])
    assert_accepted(game, "5c")
    assert_accepted(game, "10c")
    assert_rejected(game, "1e", "must_follow_suit")


def test_fallar_void_in_the_suit_led_must_trump():
    assert legal("5o 1e 12b", "7c", O) == {"5o"}
    game = round3(["7c 1o 5e", "5o 1e 12b", "3c 6c 12e", "12c 11e 11b"], plays=["7c"])
    assert_rejected(game, "1e", "must_trump")
    assert_rejected(game, "12b", "must_trump")
    assert_accepted(game, "5o")


def test_contrafallar_must_beat_a_trump_on_the_table():
    assert legal("10o 5o 1e", "7c 6o", O) == {"10o"}
    game = round3(["7c 3o 5e", "6o 1e 12b", "10o 5o 12e", "12c 11e 11b"], plays=["7c", "6o"])
    assert_rejected(game, "5o", "must_overtrump")
    assert_rejected(game, "12e", "must_trump")
    assert_accepted(game, "10o")


def test_cannot_overtrump_then_any_trump():
    assert legal("10o 5o 1e", "7c 12o", O) == {"10o", "5o"}
    game = round3(["7c 3o 5e", "12o 1e 12b", "10o 5o 12e", "12c 11e 11b"], plays=["7c", "12o"])
    assert_accepted(game, "10o")
    assert_accepted(game, "5o")
    assert_rejected(game, "12e", "must_trump")


def test_someone_already_trumped_any_card_of_the_suit_led():
    # 5c does not beat 7c, but seat 2 trumped: montar no longer applies
    assert legal("1c 5c 3o", "7c 6o", O) == {"1c", "5c"}
    assert legal("1c 5c 3o", "7c 6o 10c", O) == {"1c", "5c"}
    game = round3(["7c 1o 5e", "6o 1e 12b", "1c 5c 3o", "12c 11e 11b"], plays=["7c", "6o"])
    assert_accepted(game, "5c")
    assert_accepted(game, "1c")
    assert_rejected(game, "3o", "must_follow_suit")


def test_trump_led_must_beat_the_highest_trump():
    assert legal("10o 5o 1c", "7o", O) == {"10o"}
    assert legal("10o 5o 1c", "7o 1e 12o", O) == {"10o", "5o"}  # cannot beat the 12: any trump
    assert legal("10o 5o 1c", "7o 1e", O) == {"10o"}  # a discard does not change what must be beaten
    game = round3(["7o 1o 5e", "10o 5o 1c", "3c 6c 12e", "12c 11e 11b"], trump_card="11o", plays=["7o"])
    assert game.trump_suit is O
    error = assert_rejected(game, "5o", "must_beat")
    assert error.params["legal"] == "10o" and error.params["suit"] == error.params["trump"] == "o"
    assert_rejected(game, "1c", "must_follow_suit")
    assert_accepted(game, "10o")


def test_trump_led_can_not_beat_then_any_trump():
    assert legal("10o 5o 1c", "1o", O) == {"10o", "5o"}


def test_void_in_both_any_card():
    assert legal("1e 5b 12e", "7c", O) == {"1e", "5b", "12e"}
    assert legal("1e 5b 12e", "7c 6o", O) == {"1e", "5b", "12e"}
    game = round3(["7c 1o 5e", "1e 5b 12e", "3c 6c 10e", "12c 11e 11b"], plays=["7c"])
    for card in ("1e", "5b", "12e"):
        assert_accepted(game, card)


def test_playing_a_card_not_in_hand():
    game = round3(["7c 1o 5e", "1e 5b 12e", "3c 6c 10e", "12c 11e 11b"], plays=["7c"])
    assert_rejected(game, "3c", "not_in_hand")  # the next seat's card
    assert_rejected(game, "7c", "not_in_hand")  # already played
    assert_rejected(game, "7o", "not_in_hand")  # the turned trump card


def test_explain_illegal_matches_legal_plays():
    hand = cs("10c 5c 1e 3o")
    for trick in (cs("7c"), cs("7c 6o"), cs("1e"), cs("7o"), cs("12b"), cs("7b 1o")):
        allowed = legal_plays(hand, trick, O)
        for card in hand:
            why = explain_illegal(card, hand, trick, O)
            assert (why is None) == (card in allowed)


# -- who takes the trick ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "trick, trump, winner",
    [
        ("7c 1c 3c", O, 1),  # highest of the suit led
        ("7c 1e 3c", O, 2),  # the ace of espadas is off-suit: never wins
        ("7c 1e 1b 2c", E, 1),  # the lowest trump beats the suit led
        ("7c 2e 3c", E, 1),  # the 2 of trump beats the 3 of copas
        ("7c 2o 6o 1c", O, 2),  # highest trump
        ("7o 1c 12o", O, 2),  # trump led: highest trump
        ("2b 1o 1c 1e", B, 0),  # trump led, nothing higher
        ("5e 4c 4o 4b", C, 1),  # only trump
        ("12e 1o 3o 11e", C, 0),  # no trump: aces of other suits do not count
        ("1c", O, 0),
    ],
)
def test_trick_winner_highest_trump_else_highest_of_suit_led(trick, trump, winner):
    assert trick_winner(cs(trick), trump) == winner


def test_trick_winner_in_a_game_leads_the_next_trick():
    game = round3(["7c 1o 5e", "1e 5b 12e", "3c 6c 10e", "12c 11e 11b"], trump_card="7b")
    order = game.order
    for card in ("7c", "5b", "3c", "12c"):
        game.apply(Play(c(card)))
    # bastos is trump: the 5 of bastos takes it
    assert game.last_trick_winner == order[1] == game.turn
    assert game.tricks[order[1]] == 1 and sum(game.tricks) == 1
    assert [p.seat for p in game.last_trick] == list(order)
    game.apply(Play(c("12e")))
    for card in ("10e", "11e", "5e"):
        game.apply(Play(c(card)))
    # espadas led: the 12 beats the 11, the 10 and the 5
    assert game.last_trick_winner == order[1] == game.turn
    for card in ("1e", "6c", "11b", "1o"):
        game.apply(Play(c(card)))
    # the 11 of bastos (trump) beats the ace of espadas led; the ace of oros is off-suit
    assert game.last_trick_winner == order[3]
    assert game.phase is Phase.ROUND_OVER
    tricks = game.results[-1].tricks
    assert (tricks[order[0]], tricks[order[1]], tricks[order[2]], tricks[order[3]]) == (0, 2, 0, 1)


# -- against a restatement of RULES.md, on random positions --------------------------------------


def reference_legal(hand, trick, trump):
    """RULES.md, "Playing a trick", restated independently."""
    if not trick:
        return set(hand)
    led = trick[0].suit
    of_led = [x for x in hand if x.suit == led]
    if of_led:
        someone_fallado = led != trump and any(t.suit == trump for t in trick)
        if someone_fallado:
            return set(of_led)
        best = max(t.strength for t in trick if t.suit == led)  # led == trump: the highest trump
        beating = {x for x in of_led if x.strength > best}
        return beating or set(of_led)
    trumps = [x for x in hand if x.suit == trump]
    if trumps:
        on_table = [t.strength for t in trick if t.suit == trump]
        beating = {x for x in trumps if on_table and x.strength > max(on_table)}
        return beating or set(trumps)
    return set(hand)


def reference_winner(trick, trump):
    trumps = [i for i, t in enumerate(trick) if t.suit == trump]
    pool = trumps or [i for i, t in enumerate(trick) if t.suit == trick[0].suit]
    return max(pool, key=lambda i: trick[i].strength)


positions = st.lists(st.sampled_from(ALL_CARDS), unique=True, min_size=2, max_size=14).flatmap(
    lambda cards: st.tuples(st.just(cards), st.integers(1, min(8, len(cards) - 1)), st.sampled_from(list(Suit)))
)


@settings(max_examples=400, deadline=None)
@given(positions)
def test_legal_plays_and_trick_winner_agree_with_the_rules_on_random_positions(position_):
    cards, hand_size, trump = position_
    hand, trick = cards[:hand_size], cards[hand_size : hand_size + 5]
    allowed = legal_plays(hand, trick, trump)
    assert set(allowed) == reference_legal(hand, trick, trump)
    assert allowed, "there is always a legal card"
    for card in hand:
        why = explain_illegal(card, hand, trick, trump)
        assert (why is None) == (card in allowed)
        if why is not None:
            assert why.code in {Rule.MUST_FOLLOW_SUIT, Rule.MUST_BEAT, Rule.MUST_TRUMP, Rule.MUST_OVERTRUMP}
            assert why.params == {
                "suit": trick[0].suit.value,
                "trump": trump.value,
                "legal": " ".join(map(str, allowed)),
            }
    if trick:
        assert trick_winner(trick, trump) == reference_winner(trick, trump)
        for card in allowed:
            assert trick_winner(list(trick) + [card], trump) == reference_winner(list(trick) + [card], trump)
