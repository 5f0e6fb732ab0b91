"""Turns and phases: out-of-turn and out-of-phase actions are refused and change nothing."""

import pytest

from games.engine import (
    Bid,
    ChooseTrump,
    GameState,
    IllegalActionError,
    IllegalBidError,
    IllegalPlayError,
    IllegalTrumpError,
    Phase,
    Play,
    Rule,
    Suit,
    default_action,
    parse_action,
)

from .helpers import advance_to, c, full_deal, play_out, position, snapshot


def rejected(game, action, seat=None, error=IllegalActionError):
    before = snapshot(game)
    with pytest.raises(error) as info:
        game.apply(action, seat=seat)
    assert snapshot(game) == before, "a refused action changed the game"
    assert not game.is_legal(action, seat)
    error = info.value
    assert isinstance(error.code, Rule) and error.code == str(error).split()[0]
    assert all(isinstance(value, (str, int)) for value in error.params.values()), "parameters are plain values"
    return error


def test_wrong_seat_is_not_your_turn_in_every_phase():
    game = position(4, 1, ["1e", "3e", "12e", "11e"], "7c")
    for phase in ("bidding", "playing"):
        assert game.phase.value == phase
        for seat in range(4):
            if seat != game.turn:
                action = game.legal_actions()[0]
                error = rejected(game, action, seat=seat)
                assert error.code == "not_your_turn" and error.params == {"seat": seat, "turn": game.turn}
                assert game.legal_actions(seat) == []
        while game.phase.value == phase:
            game.apply(game.legal_actions()[0], seat=game.turn)
    hands, order = full_deal(4, 9)
    game = advance_to(4, 9)
    game.deal(hands, None)
    for _ in order:
        game.apply(Bid(1))
    assert game.phase is Phase.CHOOSING_TRUMP
    for seat in order[1:]:
        assert rejected(game, ChooseTrump(Suit.OROS), seat=seat).code == "not_your_turn"


def test_a_play_while_bidding_is_refused():
    game = position(4, 2, ["1e 3o", "3e 12o", "12e 11o", "11e 10o"], "7c")
    card = game.hands[game.turn][0]
    error = rejected(game, Play(card), error=IllegalPlayError)
    assert error.code == "not_playing_cards"


def test_a_bid_while_playing_is_refused():
    game = position(4, 2, ["1e 3o", "3e 12o", "12e 11o", "11e 10o"], "7c", bids=[0, 0, 0, 1])
    assert game.phase is Phase.PLAYING
    assert rejected(game, Bid(0), error=IllegalBidError).code == "not_bidding"
    game.apply(Play(c("1e")))
    assert rejected(game, Bid(1), error=IllegalBidError).code == "not_bidding"


def test_choose_trump_in_a_normal_round_is_refused():
    game = position(4, 2, ["1e 3o", "3e 12o", "12e 11o", "11e 10o"], "7c")
    assert rejected(game, ChooseTrump(Suit.OROS), error=IllegalTrumpError).code == "not_choosing_trump"
    for _ in range(3):
        game.apply(Bid(0))
    game.apply(Bid(1))
    assert rejected(game, ChooseTrump(Suit.COPAS), error=IllegalTrumpError).code == "not_choosing_trump"
    assert game.trump_suit is Suit.COPAS


def test_a_play_or_bid_while_choosing_trump_is_refused():
    hands, order = full_deal(4, 9)
    game = advance_to(4, 9)
    game.deal(hands, None)
    for _ in order:
        game.apply(Bid(1))
    assert rejected(game, Play(game.hands[game.turn][0]), error=IllegalPlayError).code == "not_playing_cards"
    assert rejected(game, Bid(1), error=IllegalBidError).code == "not_bidding"


def test_actions_between_rounds_and_after_the_game_are_refused():
    game = position(4, 1, ["1e", "3e", "12e", "11e"], "7c", bids=[1, 1, 1, 1], plays=["1e", "3e", "12e", "11e"])
    assert game.phase is Phase.ROUND_OVER and game.turn is None
    assert game.legal_actions() == []
    for action in (Bid(0), Play(c("1o")), ChooseTrump(Suit.OROS)):
        assert rejected(game, action).code == "no_turn"
    play_out(game)
    assert game.is_over
    assert rejected(game, Bid(0)).code == "no_turn"
    with pytest.raises(IllegalActionError) as info:
        game.deal()
    assert info.value.code in ("not_dealing", "game_over")


def test_illegal_cards_and_bids_change_nothing():
    game = position(4, 3, ["7c 1o 5e", "3c 1e 5b", "10c 5c 12e", "6c 12b 11b"], "7o", bids=[1, 0, 1])
    assert rejected(game, Bid(1), error=IllegalBidError).code == "last_bidder_sum"
    assert rejected(game, Bid(4), error=IllegalBidError).code == "bid_range"
    game.apply(Bid(0))
    game.apply(Play(c("7c")))
    assert rejected(game, Play(c("1e")), error=IllegalPlayError).code == "must_follow_suit"
    assert rejected(game, Play(c("5c")), error=IllegalPlayError).code == "not_in_hand"
    assert rejected(game, Play(c("3c")), seat=game.order[2]).code == "not_your_turn"


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_every_refused_action_in_a_game_changes_nothing(players):
    game = GameState.new(players, seed=players)
    step = 0
    while not game.is_over:
        if game.phase is Phase.ROUND_OVER:
            game.deal()
        step += 1
        if step % 7 == 0:  # a sample of positions: a snapshot looks at every seat
            seat = game.turn
            legal = game.legal_actions()
            wrong = [Play(card) for hand in game.hands for card in hand if Play(card) not in legal][:3]
            wrong += [Bid(n) for n in (-1, 9, game.forbidden_bid()) if n is not None and Bid(n) not in legal]
            wrong += [ChooseTrump(Suit.OROS)] if game.phase is not Phase.CHOOSING_TRUMP else [Bid(0)]
            for action in wrong:
                rejected(game, action)
            other = next(s for s in game.order if s != seat)
            rejected(game, legal[0], seat=other)
        game.apply(default_action(game))


@pytest.mark.parametrize(
    "text, action",
    [
        ("bid 0", Bid(0)),
        ("bid 8", Bid(8)),
        ("trump o", ChooseTrump(Suit.OROS)),
        ("trump b", ChooseTrump(Suit.BASTOS)),
        ("play 12b", Play(c("12b"))),
        ("play 1o", Play(c("1o"))),
    ],
)
def test_actions_print_and_parse_round_trip(text, action):
    assert parse_action(text) == action
    assert str(action) == text


@pytest.mark.parametrize(
    "text", ["", "bid", "bid -1", "bid x", "bid 123", "trump x", "play 13b", "play", "pass", "bid 1 2", None, 5]
)
def test_bad_action_text_raises_value_error(text):
    with pytest.raises(ValueError):
        parse_action(text)
