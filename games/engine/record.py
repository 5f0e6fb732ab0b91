"""Game records (``pocha-record/1``, and ``pocha-record/2`` for the presets other than Clásica): export a
game, load one, replay and check it.

A record is to La Pocha what PGN is to chess; see ``shared/RECORD.md``.  ``pocha-record/2``
(``shared/VARIANTS.md``) adds the table's ``rules`` and, per round, its ``kind`` and, in subastados
rounds, the ``blind_bids`` made before the trump was chosen.

A game of only some rounds of the schedule (``GameState.of_rounds``: a tournament's deals) is written as
``pocha-record/2`` whatever its rules (Clásica's too), with ``"rounds_played"``: the numbers of those rounds
in the schedule (from 1, strictly increasing, within the schedule; tie-break rounds are never played).  Its
``rounds`` are those rounds in order, each with its ``kind``, and each is checked as that round of the
schedule (dealer, cards, kind and multiplier); it is ``complete`` once every one of them is played.  An error's
``round`` counts the record's ``rounds`` entries from 1 (the second entry of ``[5, 15]`` is round 2 there,
while the replay's ``number`` is 15).  A malformed ``rounds_played`` is refused as the header's errors are
(round 1, ``deal``, index 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .actions import ChooseTrump
from .cards import CARDS_BY_TEXT, Card, Suit
from .errors import PochaError, Rule
from .presets import CLASICA, Rules
from .schedule import RoundKind
from .state import GameState, Phase

FORMAT = "pocha-record/1"
#: The presets other than Clásica.
FORMAT_2 = "pocha-record/2"


def export_record(game: GameState, *, include_current: bool = False) -> dict[str, Any]:
    """The record of ``game``: every whole round played so far (and, if asked, the one in progress)."""
    if game.practice_round is not None:
        raise ValueError("a practice game (one round of another game, played again) has no record")
    finished = len(game.results)
    logs = game.log if include_current else game.log[:finished]
    chosen = game.rounds_played
    numbers = chosen if chosen is not None else range(1, len(game.schedule) + 1)
    second = not game.rules.is_clasica or chosen is not None
    rounds: list[dict[str, Any]] = []
    for number, log in zip(numbers, logs):
        entry: dict[str, Any] = {}
        if second:
            entry["kind"] = game.schedule[number - 1].kind.value
        entry["hands"] = [[str(c) for c in hand] for hand in log.hands]
        entry["trump_card"] = str(log.trump_card) if log.trump_card is not None else None
        if log.blind_bids is not None:
            entry["blind_bids"] = list(log.blind_bids)
        entry["bids"] = list(log.bids)
        if log.trump_card is None and log.trump_suit is not None:
            entry["trump_suit"] = log.trump_suit.value
        entry["plays"] = [str(c) for c in log.plays]
        rounds.append(entry)
    if not second:
        return {"format": FORMAT, "players": list(game.names), "first_dealer": game.first_dealer, "rounds": rounds}
    return {
        "format": FORMAT_2,
        "rules": game.rules.as_json(),
        **({"rounds_played": list(chosen)} if chosen is not None else {}),
        "players": list(game.names),
        "first_dealer": game.first_dealer,
        "rounds": rounds,
    }


class RecordError(Exception):
    """A record that breaks a rule: where (round from 1, kind, index) and why."""

    def __init__(self, round_number: int, kind: str, index: int, message: str) -> None:
        super().__init__(f"round {round_number}, {kind} {index}: {message}")
        self.round = round_number
        self.kind = kind
        self.index = index
        self.message = message

    def as_json(self) -> dict[str, Any]:
        return {"error": {"round": self.round, "kind": self.kind, "index": self.index, "message": self.message}}


@dataclass(frozen=True, slots=True)
class Replay:
    game: GameState

    def as_json(self) -> dict[str, Any]:
        complete = self.game.is_over
        return {
            "rounds": [r.as_json() for r in self.game.results],
            "totals": list(self.game.totals),
            "complete": complete,
            "winners": self.game.winners() if complete else None,
        }


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _card(text: object, round_number: int, kind: str, index: int) -> Card:
    try:
        return Card.parse(text)  # type: ignore[arg-type]
    except ValueError:
        raise RecordError(round_number, kind, index, f"not a card: {text!r}") from None


def _header(record: object) -> GameState:
    def bad(message: str) -> RecordError:
        return RecordError(1, "deal", 0, message)

    if not isinstance(record, dict):
        raise bad("a record must be a JSON object")
    rules = CLASICA
    if record.get("format") == FORMAT_2:
        try:
            rules = Rules.from_json(record.get("rules"))
        except ValueError as error:
            raise bad(f"rules: {error}") from None
    elif record.get("format") != FORMAT:
        raise bad(f"format must be {FORMAT!r} or {FORMAT_2!r}, not {record.get('format')!r}")
    players = record.get("players")
    if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
        raise bad("players must be a list of names")
    try:
        rules.check_players(len(players))
    except ValueError as error:
        raise bad(str(error)) from None
    first_dealer = record.get("first_dealer")
    if not _is_int(first_dealer) or not 0 <= first_dealer < len(players):  # type: ignore[operator]
        raise bad(f"first_dealer must be a seat from 0 to {len(players) - 1}, not {first_dealer!r}")
    if not isinstance(record.get("rounds"), list):
        raise bad("rounds must be a list")
    game = GameState(players, first_dealer, rules=rules)  # type: ignore[arg-type]
    if "rounds_played" in record:
        if record.get("format") != FORMAT_2:
            raise bad(f"rounds_played is written in {FORMAT_2!r} records only")
        try:
            game.rounds_played = game.check_rounds(record["rounds_played"])
        except ValueError as error:
            raise bad(f"rounds_played: {error}") from None
    return game


def replay(record: object) -> Replay:
    """Replay ``record`` (parsed JSON), checking every rule; RecordError at the first broken one."""
    game = _header(record)
    assert isinstance(record, dict)
    rounds: list[Any] = record["rounds"]
    for number, entry in enumerate(rounds, start=1):
        _replay_round(game, number, entry)
    return Replay(game)


def _replay_round(game: GameState, number: int, entry: object) -> None:
    """The record's ``number``-th round (from 1): round ``number`` of the schedule, or in a game of chosen
    rounds the ``number``-th of them."""
    chosen = game.rounds_played
    if chosen is None:
        if number > len(game.schedule):
            raise RecordError(number, "deal", 0, f"a game of {game.players} has only {len(game.schedule)} rounds")
    elif number > len(chosen):
        played = ", ".join(map(str, chosen))
        raise RecordError(number, "deal", 0, f"the game plays only {len(chosen)} rounds of its schedule ({played})")
    if not isinstance(entry, dict):
        raise RecordError(number, "deal", 0, "a round must be a JSON object")
    spec = game.schedule[(number if chosen is None else chosen[number - 1]) - 1]
    if (not game.rules.is_clasica or chosen is not None) and entry.get("kind") != spec.kind.value:
        raise RecordError(number, "deal", 0, f"round {spec.number} is a {spec.kind} round, not {entry.get('kind')!r}")
    trump_card = _replay_deal(game, number, entry)
    if spec.is_blind:
        _replay_bids(game, number, entry, "blind_bids", "blind_bid")
    elif "blind_bids" in entry:
        raise RecordError(number, "blind_bid", 0, "only subastados rounds have blind bids")
    if spec.kind is RoundKind.SUBASTADOS:
        _replay_trump(game, number, entry, trump_card)
        _replay_bids(game, number, entry)
    else:
        _replay_bids(game, number, entry)
        _replay_trump(game, number, entry, trump_card)
    _replay_plays(game, number, entry)


def _replay_deal(game: GameState, number: int, entry: dict[str, Any]) -> Card | None:
    """Deal the round's ``hands`` and ``trump_card``; the trump card."""
    hands_raw = entry.get("hands")
    if not isinstance(hands_raw, list) or not all(isinstance(h, list) for h in hands_raw):
        raise RecordError(number, "deal", 0, "hands must be a list of lists of cards")
    try:
        hands = [[CARDS_BY_TEXT[c] for c in hand] for hand in hands_raw]
    except (KeyError, TypeError):  # name the culprit
        hands = [[_card(c, number, "deal", 0) for c in hand] for hand in hands_raw]
    trump_raw = entry.get("trump_card")
    trump_card = None if trump_raw is None else _card(trump_raw, number, "deal", 0)
    try:
        game.deal(hands, trump_card)
    except PochaError as error:
        raise RecordError(number, "deal", 0, error.describe()) from None
    return trump_card


def _replay_bids(game: GameState, number: int, entry: dict[str, Any], key: str = "bids", kind: str = "bid") -> None:
    """Every seat's bid, in bidding order (``blind_bids``: subastados' blind ones)."""
    bids = entry.get(key)
    if not isinstance(bids, list):
        raise RecordError(number, kind, 0, f"{key} must be a list")
    bidders = len(game.order)
    for index, bid in enumerate(bids):
        if index >= bidders:
            raise RecordError(number, kind, index, f"only {bidders} players bid in this round")
        if not _is_int(bid):
            raise RecordError(number, kind, index, f"a bid must be a whole number, not {bid!r}")
        try:
            game.bid(bid)
        except PochaError as error:
            raise RecordError(number, kind, index, error.describe()) from None
    if len(bids) < bidders:
        raise RecordError(number, kind, len(bids), f"missing bid: {bidders} players bid in this round")


def _replay_trump(game: GameState, number: int, entry: dict[str, Any], trump_card: Card | None) -> None:
    """The auction winner's ``trump_suit``; in a normal round, if given, the turned card's suit."""
    suit_raw = entry.get("trump_suit")
    if game.phase is Phase.CHOOSING_TRUMP:
        letters = ", ".join(s.value for s in game.suits)
        try:
            suit = Suit.parse(suit_raw)  # type: ignore[arg-type]
            game.apply(ChooseTrump(suit))
        except (ValueError, PochaError):
            raise RecordError(
                number, "trump", 0, f"the auction winner must choose a suit ({letters}), not {suit_raw!r}"
            ) from None
    elif suit_raw is not None and suit_raw != (game.trump_suit.value if game.trump_suit else None):
        raise RecordError(number, "trump", 0, f"trump is not chosen in a normal round (turned: {trump_card})")


def _replay_plays(game: GameState, number: int, entry: dict[str, Any]) -> None:
    """Every card of the round, in the order played: all of them, no more."""
    spec = game.spec
    assert spec is not None
    plays = entry.get("plays")
    if not isinstance(plays, list):
        raise RecordError(number, "play", 0, "plays must be a list")
    total = spec.cards * len(game.order)
    for index in range(min(len(plays), total)):  # the hot loop: keep it lean
        text = plays[index]
        try:
            card = CARDS_BY_TEXT[text]
        except (KeyError, TypeError):
            raise RecordError(number, "play", index, f"not a card: {text!r}") from None
        try:
            game.play(card)
        except PochaError as error:
            seat = game.turn  # the card was refused, so still the player's turn
            if error.code is Rule.NOT_IN_HAND and seat is not None:
                raise RecordError(
                    number, "play", index, f"{card} is not in {game.names[seat]}'s hand (seat {seat})"
                ) from None
            raise RecordError(number, "play", index, error.describe()) from None
    if len(plays) > total:
        raise RecordError(number, "play", total, f"the round has only {total} plays")
    if len(plays) < total:
        raise RecordError(number, "play", len(plays), f"round incomplete: {total} plays expected, {len(plays)} given")


def replay_line(record: object) -> tuple[dict[str, Any], bool]:
    """The replay command's output for one record, and whether it replayed."""
    try:
        return replay(record).as_json(), True
    except RecordError as error:
        return error.as_json(), False


def load_game(record: object) -> GameState:
    """The game state at the end of a record (RecordError if it breaks a rule)."""
    return replay(record).game
