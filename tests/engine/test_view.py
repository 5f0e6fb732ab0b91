"""The seat view: what one seat may see, and nothing more."""

import pytest

from games.engine import Bid, Phase, Play, seat_view

from .helpers import advance_to, c, full_deal, play_out, position


def hidden_from(game, seat):
    """Cards ``seat`` must not see: other seats' unplayed cards (the 8-card round's trump card is public)."""
    return {card for other, hand in enumerate(game.hands) if other != seat for card in hand} - {game.trump_card}


def assert_secret(game, seat):
    view = seat_view(game, seat)
    text = repr(view)
    for card in hidden_from(game, seat):
        assert card not in view.visible_cards()
        assert repr(card) not in text, f"seat {seat}'s view shows {card}"
    return view


def test_view_holds_own_hand_only():
    game = position(4, 3, ["7c 1o 5e", "3c 1e 5b", "10c 5c 12e", "6c 12b 11b"], "7o")
    for seat in range(4):
        view = assert_secret(game, seat)
        assert sorted(view.hand) == sorted(game.hands[seat])
        assert view.hand == tuple(game.sorted_hand(seat))
        assert view.seat == seat
    spectator = assert_secret(game, None)
    assert spectator.hand == () and spectator.legal == () and spectator.reasons == {}
    for card in (card for hand in game.hands for card in hand):
        assert repr(card) not in repr(spectator)


def test_view_shows_hand_sizes_of_everyone():
    game = position(
        4, 3, ["7c 1o 5e", "3c 1e 5b", "10c 5c 12e", "6c 12b 11b"], "7o", bids=[1, 0, 1, 0], plays=["7c", "3c"]
    )
    view = seat_view(game, game.order[3])
    sizes = {game.order[0]: 2, game.order[1]: 2, game.order[2]: 3, game.order[3]: 3}
    assert view.hand_sizes == tuple(sizes[seat] for seat in range(4))
    assert [p.card for p in view.trick] == [c("7c"), c("3c")]
    assert view.bids == tuple(game.bids)


def test_view_hand_sizes_at_six_include_the_resting_dealer():
    game = position(6, 2, ["1o 3o", "11o 10o", "6o 5o", "3c 12c", "1e 3e"], "1b")
    view = seat_view(game, game.dealer)
    assert view.hand == () and view.resting == game.dealer
    assert view.hand_sizes[game.dealer] == 0
    assert sum(view.hand_sizes) == 10
    assert view.legal == ()
    assert_secret(game, game.dealer)


def test_view_shows_the_trump_card():
    game = position(4, 2, ["1e 3o", "3e 12o", "12e 11o", "11e 10o"], "7c")
    for seat in [*range(4), None]:
        view = seat_view(game, seat)
        assert view.trump_card == c("7c") and view.trump_suit.value == "c"
        assert c("7c") in view.visible_cards()
        assert view.multiplier == 1


def test_eight_card_round_trump_card_is_shown_to_everyone():
    hands, order = full_deal(4, 8, last_card=c("5b"))
    game = advance_to(4, 8)
    game.deal(hands, c("5b"))
    for seat in range(4):
        view = assert_secret(game, seat)
        assert view.trump_card == c("5b") and view.multiplier == 3
        assert (c("5b") in view.hand) == (seat == order[-1])


def test_legal_actions_only_on_own_turn():
    game = position(4, 2, ["1e 3o", "3e 12o", "12e 11o", "11e 10o"], "7c", bids=[0, 0, 0])
    last = game.order[3]
    for seat in range(4):
        view = seat_view(game, seat)
        if seat == last:
            assert view.my_turn and view.legal == (Bid(0), Bid(1)) and view.forbidden_bid == 2
        else:
            assert not view.my_turn and view.legal == () and view.forbidden_bid is None and view.reasons == {}
    game.apply(Bid(1))
    leader = game.order[0]
    for seat in range(4):
        view = seat_view(game, seat)
        assert view.legal == ((Play(c("3o")), Play(c("1e"))) if seat == leader else ())  # display order


def test_view_gives_reasons_for_illegal_cards():
    game = position(4, 3, ["7c 1o 5e", "10c 5c 1e", "3c 6c 12e", "12c 12b 11b"], "7o", bids=[1, 0, 1, 0], plays=["7c"])
    seat = game.turn
    view = seat_view(game, seat)
    assert view.legal == (Play(c("10c")),)
    assert set(view.reasons) == {c("5c"), c("1e")}
    assert view.reasons[c("5c")].code == "must_beat"
    assert view.reasons[c("1e")].code == "must_follow_suit"
    for error in view.reasons.values():
        assert error.params == {"suit": "c", "trump": "o", "legal": "10c"}
    assert all(Play(card) not in view.legal for card in view.reasons)
    for other in range(4):
        if other != seat:
            assert seat_view(game, other).reasons == {}


def test_view_after_a_trick_shows_the_last_trick_and_tricks_won():
    game = position(
        4,
        3,
        ["7c 1o 5e", "10c 5c 1e", "3c 6c 12e", "12c 12b 11b"],
        "7o",
        bids=[1, 0, 1, 0],
        plays=["7c", "10c", "3c", "12c"],
    )
    view = seat_view(game, game.order[0])
    assert [p.card for p in view.last_trick] == [c("7c"), c("10c"), c("3c"), c("12c")]
    assert view.last_trick_winner == game.order[2]  # the 3 beats the 12 and the 10
    assert view.tricks[game.order[2]] == 1 and sum(view.tricks) == 1
    assert view.trick == ()
    assert view.turn == game.order[2]


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_views_never_leak_in_a_whole_game(players):
    game = advance_to(players, 1, seed=players)
    game.deal()
    while not game.is_over:
        if game.phase is Phase.ROUND_OVER:
            game.deal()
        for seat in [*range(players), None]:
            view = seat_view(game, seat)
            hidden = hidden_from(game, seat)
            assert not (view.visible_cards() & hidden)
            assert view.players == players and view.number == game.number
        if game.number % 3:
            play_out(game, until_round_end=True)  # check one round in three action by action
        else:
            game.apply(game.legal_actions()[0])
