"""Shared helpers for the engine tests: building positions, checking invariants."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from games.engine import (
    Action,
    Bid,
    Card,
    ChooseTrump,
    GameState,
    Phase,
    Play,
    Suit,
    deck_for,
    default_action,
    export_record,
    seat_view,
)
from games.engine.schedule import active_order, dealer_of, schedule


def c(text: str) -> Card:
    return Card.parse(text)


def cs(text: str) -> list[Card]:
    """``"1o 3c 12b"`` -> three cards."""
    return [Card.parse(t) for t in text.split()]


def advance_to(players: int, number: int, *, first_dealer: int = 0, seed: int = 12345) -> GameState:
    """A game whose rounds before ``number`` were dealt at random and played by the default player,
    waiting for round ``number`` to be dealt."""
    game = GameState(players, first_dealer, seed=seed)
    while game.number < number - 1 or game.phase not in (Phase.DEALING, Phase.ROUND_OVER):
        if game.phase in (Phase.DEALING, Phase.ROUND_OVER):
            game.deal()
        else:
            game.apply(default_action(game))
    assert game.next_spec is not None and game.next_spec.number == number
    return game


def order_for(players: int, number: int, first_dealer: int = 0) -> tuple[int, ...]:
    return active_order(dealer_of(first_dealer, number, players), players)


def hands_by_seat(players: int, order: Sequence[int], in_order: Sequence[Sequence[Card]]) -> list[list[Card]]:
    hands: list[list[Card]] = [[] for _ in range(players)]
    for seat, hand in zip(order, in_order, strict=True):
        hands[seat] = list(hand)
    return hands


def position(
    players: int,
    number: int,
    in_order: Sequence[Sequence[Card] | str],
    trump_card: Card | str | None,
    *,
    bids: Sequence[int] = (),
    trump_suit: Suit | None = None,
    plays: Sequence[Card | str] = (),
    first_dealer: int = 0,
) -> GameState:
    """Round ``number`` dealt with ``in_order`` hands (first bidder first), then the given bids,
    trump choice and plays applied through the checked path."""
    game = advance_to(players, number, first_dealer=first_dealer)
    order = order_for(players, number, first_dealer)
    hands = hands_by_seat(players, order, [cs(h) if isinstance(h, str) else h for h in in_order])
    trump = c(trump_card) if isinstance(trump_card, str) else trump_card
    game.deal(hands, trump)
    for amount in bids:
        game.apply(Bid(amount))
    if trump_suit is not None:
        game.apply(ChooseTrump(trump_suit))
    for card in plays:
        game.apply(Play(c(card) if isinstance(card, str) else card))
    return game


def full_deal(
    players: int, number: int, *, first_dealer: int = 0, last_card: Card | None = None, exclude: Iterable[Card] = ()
) -> tuple[list[list[Card]], tuple[int, ...]]:
    """Hands for an 8-card round that use the whole deck, dealt one at a time from the dealer's left,
    optionally arranging for ``last_card`` to be the last card dealt."""
    order = order_for(players, number, first_dealer)
    cards = schedule(players)[number - 1].cards
    deck = [card for card in deck_for(players) if card not in set(exclude)]
    if last_card is not None:
        deck.remove(last_card)
        deck.append(last_card)
    hands: list[list[Card]] = [[] for _ in range(players)]
    position_ = 0
    for _ in range(cards):
        for seat in order:
            hands[seat].append(deck[position_])
            position_ += 1
    return hands, order


def play_out(
    game: GameState,
    choose: Callable[[GameState], Action] = default_action,
    *,
    checked: bool = True,
    until_round_end: bool = False,
) -> GameState:
    """Play on (dealing from the game's generator) until the game, or with ``until_round_end`` the round, ends."""
    while not game.is_over:
        if game.phase is Phase.ROUND_OVER:
            if until_round_end:
                break
            game.deal()
            continue
        action = choose(game)
        if checked:
            game.apply(action)
        else:
            game.apply_unchecked(action)
    return game


def view_key(view: Any) -> tuple[Any, ...]:
    """A seat view as a comparable value (the error objects in ``reasons`` compare by identity)."""
    fields = [f.name for f in dataclasses.fields(view) if f.name != "reasons"]
    reasons = sorted((str(card), err.code, sorted(err.params.items())) for card, err in view.reasons.items())
    return tuple(getattr(view, name) for name in fields) + (tuple(reasons),)


def snapshot(game: GameState) -> tuple[Any, ...]:
    """Everything observable about ``game``: its record so far, internal fields and every seat's view."""
    return (
        export_record(game, include_current=True),
        game.phase,
        game.number,
        game.turn,
        [list(h) for h in game.hands],
        list(game.bids),
        list(game.bids_made),
        game.trump_card,
        game.trump_suit,
        game.auction_winner,
        list(game.trick),
        game.last_trick,
        list(game.tricks),
        list(game.totals),
        list(game.results),
        tuple(view_key(seat_view(game, seat)) for seat in [*range(game.players), None]),
    )


def card_places(game: GameState) -> list[Card]:
    """Every dealt card's current place, as a list (duplicates mean a card is in two places):
    hands, the current trick, cards played earlier this round and the turned trump card."""
    if game.spec is None:
        return []
    log = game.log[-1]
    trick = [p.card for p in game.trick]
    earlier = log.plays[: len(log.plays) - len(trick)]
    assert log.plays[len(log.plays) - len(trick) :] == trick
    places = [card for hand in game.hands for card in hand] + trick + list(earlier)
    if game.trump_card is not None and not game.spec.trump_is_last_dealt:
        places.append(game.trump_card)
    return places


def check_card_conservation(game: GameState) -> None:
    if game.spec is None:
        return
    deck = set(deck_for(game.players))
    places = card_places(game)
    counts = Counter(places)
    assert all(n == 1 for n in counts.values()), f"a card is in two places: {counts.most_common(3)}"
    assert set(places) <= deck
    turned = 1 if game.spec.is_normal and not game.spec.trump_is_last_dealt else 0
    dealt = game.spec.cards * len(game.order)
    assert len(places) == dealt + turned
    undealt = deck - set(places)
    assert len(undealt) == len(deck) - dealt - turned >= 0


def random_choice(rng: Any) -> Callable[[GameState], Action]:
    def choose(game: GameState) -> Action:
        return rng.choice(game.legal_actions())

    return choose


def exact_bid_rate(games: Iterable[GameState]) -> float:
    exact = total = 0
    for game in games:
        for result in game.results:
            for seat, bid in enumerate(result.bids):
                if bid is None:
                    continue
                total += 1
                exact += bid == result.tricks[seat]
    return exact / total
