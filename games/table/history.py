"""A game's log, and what is derived from it.

The log is the truth of a game: its ``Round`` rows (each deal's seed and hands) and its ``Move`` rows (every
accepted bid, trump choice and card, in ``seq`` order).  From it come the game record (``record``: the
download, the replay, the profiles), every round's result (``results``, kept on the round rows once the
round is over), and the table's state: ``Table.state`` holds only what the next move needs and is a cache,
rebuilt from the log by replaying it through the engine's checks (``rebuild``) whenever it is missing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from games.engine import Action, Bid, Card, ChooseTrump, GameState, Play, Suit
from games.engine.presets import CLASICA, Rules
from games.engine.record import FORMAT, export_record
from games.engine.snapshot import dump, load
from games.engine.state import RoundResult
from games.models import Move, Round, Seat, Table

#: ``Move.kind`` for each kind of decision.
KIND_OF = {Bid: Move.Kind.BID, ChooseTrump: Move.Kind.TRUMP, Play: Move.Kind.PLAY}


def move_fields(action: Action) -> tuple[str, str]:
    """(kind, value) of the move row that records ``action``."""
    if isinstance(action, Bid):
        return Move.Kind.BID.value, str(action.amount)
    if isinstance(action, ChooseTrump):
        return Move.Kind.TRUMP.value, action.suit.value
    return Move.Kind.PLAY.value, str(action.card)


def action_of(kind: str, value: str) -> Action:
    """The engine's action a move row records (ValueError if the row is not one)."""
    if kind == Move.Kind.BID:
        return Bid(int(value))
    if kind == Move.Kind.TRUMP:
        return ChooseTrump(Suit.parse(value))
    if kind == Move.Kind.PLAY:
        return Play(Card.parse(value))
    raise ValueError(f"not a kind of move: {kind!r}")


@dataclass(frozen=True)
class Logged:
    """A game's log as read from its rows: the players' names by seat, the first dealer, the deals and,
    for each round, its moves as (seat, kind, value) in order."""

    names: tuple[str, ...]
    first_dealer: int
    deals: tuple[tuple[int, tuple[tuple[str, ...], ...], str | None, int], ...]  # (number, hands, trump card, seed)
    moves: dict[int, list[tuple[int, str, str]]]
    rules: Rules = CLASICA
    #: The rounds of the schedule the game plays (a tournament's deals); None: the whole game.
    rounds: tuple[int, ...] | None = None


def read_log(table: Table, seats: Iterable[Seat] | None = None) -> Logged | None:
    """The table's log (two queries, and one for the seats unless given); None before its first deal."""
    if table.first_dealer is None:
        return None
    deals = tuple(
        (number, tuple(tuple(hand) for hand in hands), trump_card, seed)
        for number, hands, trump_card, seed in Round.objects.filter(table_id=table.pk)
        .order_by("number")
        .values_list("number", "hands", "trump_card", "seed")
    )
    if not deals:
        return None
    if seats is None:
        seats = Seat.objects.filter(table_id=table.pk)
    names = {s.position: s.name for s in seats}
    moves: dict[int, list[tuple[int, str, str]]] = {}
    for number, seat, kind, value in (
        Move.objects.filter(table_id=table.pk).order_by("seq").values_list("round", "seat", "kind", "value")
    ):
        moves.setdefault(number, []).append((seat, kind, value))
    return Logged(
        tuple(names.get(p, f"P{p + 1}") for p in range(table.size)),
        table.first_dealer,
        deals,
        moves,
        table.game_rules,
        tuple(int(n) for n in table.deals) if table.deals else None,
    )


def _round_complete(hands: Sequence[Sequence[str]], moves: Sequence[tuple[int, str, str]]) -> bool:
    return sum(1 for _seat, kind, _value in moves if kind == Move.Kind.PLAY) == sum(len(hand) for hand in hands)


def record(table: Table, *, include_current: bool = False, log: Logged | None = None) -> dict[str, Any] | None:
    """The game's record (``pocha-record/1``, ``shared/RECORD.md``; ``pocha-record/2`` for the other house
    rules, ``shared/VARIANTS.md``) from its log: every whole round (and the one in play, if asked); None before
    the first deal."""
    log = log or read_log(table)
    if log is None:
        return None
    if not log.rules.is_clasica or log.rounds is not None:
        # The round's kind and the subastados' blind bids come from the rules: the engine's own record of
        # the log replayed (every move checked again).
        return export_record(replay_log(log), include_current=include_current)
    rounds = []
    for number, hands, trump_card, _seed in log.deals:
        moves = log.moves.get(number, [])
        if not include_current and not _round_complete(hands, moves):
            break
        entry: dict[str, Any] = {
            "hands": [list(hand) for hand in hands],
            "trump_card": trump_card,
            "bids": [int(value) for _seat, kind, value in moves if kind == Move.Kind.BID],
        }
        trump = [value for _seat, kind, value in moves if kind == Move.Kind.TRUMP]
        if trump_card is None and trump:
            entry["trump_suit"] = trump[0]
        entry["plays"] = [value for _seat, kind, value in moves if kind == Move.Kind.PLAY]
        rounds.append(entry)
    return {"format": FORMAT, "players": list(log.names), "first_dealer": log.first_dealer, "rounds": rounds}


class BrokenLog(Exception):
    """The log does not replay: a move the engine refuses, at a round and seat (a bug, or rows edited by hand)."""


def replay_log(log: Logged) -> GameState:
    """The whole game the log describes, history included, every move checked by the engine."""
    if log.rounds is not None:
        game = GameState.of_rounds(log.rules, list(log.names), log.first_dealer, log.rounds)
    else:
        game = GameState(list(log.names), log.first_dealer, rules=log.rules)
    for number, hands, trump_card, seed in log.deals:
        try:
            game.deal(
                [[Card.parse(c) for c in hand] for hand in hands],
                None if trump_card is None else Card.parse(trump_card),
            )
            game.log[-1].seed = seed
            for seat, kind, value in log.moves.get(number, []):
                game.apply(action_of(kind, value), seat)
        except Exception as error:  # PochaError, or a row that is not a move
            raise BrokenLog(f"round {number}: {error}") from error
    return game


def rebuild(table: Table) -> GameState | None:
    """The table's game from its log (None before the first deal)."""
    log = read_log(table)
    return None if log is None else replay_log(log)


def current_state(game: GameState) -> dict[str, Any]:
    """What ``Table.state`` keeps of ``game``: what the next move needs."""
    return dump(game, history=False)


def game_of(table: Table) -> GameState | None:
    """The table's game as its next move needs it: its state, or, if that is missing, the state rebuilt from
    the log (then written back on ``table``, for the caller's save)."""
    if table.state:
        return load(table.state)
    game = rebuild(table)
    if game is not None:
        table.state = current_state(game)
    return game


def results(table_id: int) -> tuple[RoundResult, ...]:
    """Every finished round's result, in order, as kept on the round rows (one query)."""
    return tuple(
        RoundResult.from_json(data)
        for data in Round.objects.filter(table_id=table_id, result__isnull=False)
        .order_by("number")
        .values_list("result", flat=True)
    )
