"""A plain, independent replay of pocha-record/2 game records: the presets of shared/VARIANTS.md.

A second opinion on the engine's results for the presets other than Clásica, written from the text of
VARIANTS.md alone: it shares no code with games.engine (nor with reference_pocha.py, the Clásica one)
and imports nothing from them.  For a valid record ``replay_line(record)`` returns the same line as
``python -m games.engine replay``; for a record that breaks a rule, an error naming the same round,
kind and index (the messages are worded apart).

Usage: python benchmarks/reference_presets.py FILE...   (one JSON line per record; FILE may be -)
"""

import json
import sys
from typing import NamedTuple

FORMAT = "pocha-record/2"
SPANISH_SUITS = ("o", "c", "e", "b")
FRENCH_SUITS = ("S", "H", "D", "C")
SPANISH_RANKS = (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)
SPANISH_STRONGEST_FIRST = (1, 3, 12, 11, 10, 7, 6, 5, 4, 2)
FRENCH_RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")  # weakest first
PLAYERS = {"indias": (3, 8), "se-dobla": (3, 8), "bazas": (3, 7)}
SCHEDULES = ("sencillas", "dobles", "una-mas", "escalera")
INDIAS_REMOVAL = ("2e", "2b", "2c", "2o", "4e", "4b", "4c", "4o")


class Card(NamedTuple):
    suit: str
    strength: int  # higher beats lower within a suit
    text: str


SPANISH = {}
for _suit in SPANISH_SUITS:
    for _rank in SPANISH_RANKS:
        _text = "%d%s" % (_rank, _suit)
        SPANISH[_text] = Card(_suit, len(SPANISH_STRONGEST_FIRST) - SPANISH_STRONGEST_FIRST.index(_rank), _text)
FRENCH = {}
for _suit in FRENCH_SUITS:
    for _i, _rank in enumerate(FRENCH_RANKS):
        FRENCH[_rank + _suit] = Card(_suit, _i + 1, _rank + _suit)
del _suit, _rank, _text, _i


class ReplayError(Exception):
    def __init__(self, round_number, kind, index, message):
        super().__init__(message)
        self.round_number = round_number
        self.kind = kind
        self.index = index
        self.message = message


class Table(NamedTuple):
    preset: str
    schedule: str
    forehead: bool
    players: int
    deck: frozenset
    cards: dict  # every card of the deck's family, by text (a card of the other family is "not a card")
    biggest: int


def table_of(record):
    def fail(message):
        return ReplayError(1, "deal", 0, message)

    if not isinstance(record, dict):
        raise fail("a record must be a JSON object")
    if record.get("format") != FORMAT:
        raise fail("format must be %r" % FORMAT)
    rules = record.get("rules")
    if not isinstance(rules, dict) or rules.get("preset") not in PLAYERS:
        raise fail("rules must name a preset")
    preset = rules["preset"]
    schedule = rules.get("schedule", "sencillas")
    forehead = rules.get("forehead", False)
    if set(rules) - {"preset", "schedule", "forehead"} or schedule not in SCHEDULES or forehead not in (True, False):
        raise fail("unknown rules")
    if preset != "se-dobla" and (schedule != "sencillas" or forehead):
        raise fail("only se-dobla has options")
    players = record.get("players")
    if not isinstance(players, list) or not all(isinstance(name, str) for name in players):
        raise fail("players must be a list of names")
    low, high = PLAYERS[preset]
    if not low <= len(players) <= high:
        raise fail("%s is played by %d to %d" % (preset, low, high))
    first_dealer = record.get("first_dealer")
    if not isinstance(first_dealer, int) or isinstance(first_dealer, bool) or not 0 <= first_dealer < len(players):
        raise fail("first_dealer must be a seat")
    if not isinstance(record.get("rounds"), list):
        raise fail("rounds must be a list")
    n = len(players)
    if preset == "bazas":
        return Table(preset, schedule, forehead, n, frozenset(FRENCH.values()), FRENCH, 7)
    biggest = 40 // n
    deck = set(SPANISH.values())
    if preset == "indias":
        for text in INDIAS_REMOVAL[: 40 - n * biggest]:
            deck.discard(SPANISH[text])
    return Table(preset, schedule, forehead, n, frozenset(deck), SPANISH, biggest)


def rounds_of(table):
    """(kind, cards) of every round, before any tie-break."""
    n, m = table.players, table.biggest
    one = "indias" if table.forehead else "normal"
    if table.preset == "indias":
        sizes = [1] * n + list(range(2, m)) + [m] * n + list(range(m - 1, 0, -1))
        out = [("normal", size) for size in sizes]
        return out + [("indias", 1)] * n + [("subastados", m)] * n + [("oros", m)] * n
    if table.preset == "bazas":
        return [("normal", size) for size in [3, 4, 5, 6] + [7] * n + [6, 5, 4, 3]]
    if table.schedule == "escalera":
        sizes = [size for size in range(1, m + 1) for _ in range(n)]
    else:
        top = {"sencillas": n, "dobles": 2 * n, "una-mas": 2}[table.schedule]
        sizes = list(range(1, m)) + [m] * top + list(range(m - 1, 0, -1))
    return [(one if size == 1 else "normal", size) for size in sizes]


def phase_of(rounds, index, kind):
    """The stage the engine names: subasta for subastados, subida until the hands first shrink, then bajada."""
    if kind == "subastados":
        return "subasta"
    sizes = [cards for _kind, cards in rounds[: index + 1]]
    return "subida" if all(a <= b for a, b in zip(sizes, sizes[1:])) else "bajada"


def score(bid, won):
    return 10 + 5 * bid if bid == won else -5 * abs(bid - won)


def allowed(hand, trick, trump, losing_trump):
    """What may be played from ``hand`` on ``trick`` (cards so far)."""
    if not trick:
        return list(hand)
    led = trick[0].suit
    follow = [c for c in hand if c.suit == led]
    trumped = led != trump and any(c.suit == trump for c in trick)
    if follow:
        if trumped:
            return follow
        top = max(c.strength for c in trick if c.suit == led)
        return [c for c in follow if c.strength > top] or follow
    trumps = [c for c in hand if c.suit == trump]
    top_trump = max([c.strength for c in trick if c.suit == trump], default=0)
    winning = [c for c in trumps if c.strength > top_trump]
    if winning:
        return winning
    if trumps and losing_trump:
        return trumps
    return list(hand)


def winner_of(trick, seats, trump):
    best = 0
    for i in range(1, len(trick)):
        card, top = trick[i], trick[best]
        if (card.suit == top.suit and card.strength > top.strength) or (card.suit == trump and top.suit != trump):
            best = i
    return seats[best]


def read_bids(entry, key, kind, number, order, cards, restricted):
    bids = entry.get(key)
    if not isinstance(bids, list):
        raise ReplayError(number, kind, 0, "%s must be a list" % key)
    for index, bid in enumerate(bids):
        if index >= len(order):
            raise ReplayError(number, kind, index, "too many bids")
        if not isinstance(bid, int) or isinstance(bid, bool) or not 0 <= bid <= cards:
            raise ReplayError(number, kind, index, "a bid goes from 0 to %d" % cards)
        if restricted and index == len(order) - 1 and sum(bids[:index]) + bid == cards:
            raise ReplayError(number, kind, index, "the last bidder may not make it %d" % cards)
    if len(bids) < len(order):
        raise ReplayError(number, kind, len(bids), "missing bid")
    return dict(zip(order, bids))


def replay_round(table, first_dealer, number, kind, cards, phase, entry):
    if not isinstance(entry, dict):
        raise ReplayError(number, "deal", 0, "a round must be a JSON object")
    if entry.get("kind") != kind:
        raise ReplayError(number, "deal", 0, "this is a %s round" % kind)
    n = table.players
    dealer = (first_dealer + number - 1) % n
    order = [(dealer + i) % n for i in range(1, n + 1)]

    def bad_deal(message):
        return ReplayError(number, "deal", 0, message)

    raw = entry.get("hands")
    if not isinstance(raw, list) or not all(isinstance(h, list) for h in raw):
        raise bad_deal("hands must be lists of cards")
    hands = []
    for raw_hand in raw:
        hand = []
        for text in raw_hand:
            if not isinstance(text, str) or text not in table.cards:
                raise bad_deal("not a card: %r" % (text,))
            hand.append(table.cards[text])
        hands.append(hand)
    raw_trump = entry.get("trump_card")
    trump_card = None
    if raw_trump is not None:
        if not isinstance(raw_trump, str) or raw_trump not in table.cards:
            raise bad_deal("not a card: %r" % (raw_trump,))
        trump_card = table.cards[raw_trump]
    if len(hands) != n:
        raise bad_deal("%d hands" % n)
    dealt = set()
    for hand in hands:
        if len(hand) != cards:
            raise bad_deal("%d cards each" % cards)
        for card in hand:
            if card not in table.deck:
                raise bad_deal("%s is not in the deck" % card.text)
            if card in dealt:
                raise bad_deal("%s twice" % card.text)
            dealt.add(card)
    oros_fixed = kind == "oros" or (kind == "desempate" and table.preset == "indias")
    if kind == "subastados" or oros_fixed:
        if trump_card is not None:
            raise bad_deal("no card is turned")
        trump = "o" if oros_fixed else None
    else:
        if trump_card is None:
            raise bad_deal("the trump card is missing")
        if trump_card not in table.deck:
            raise bad_deal("%s is not in the deck" % trump_card.text)
        if len(dealt) == len(table.deck):  # the whole deck dealt: the last card dealt marks trump
            if trump_card not in hands[order[-1]]:
                raise bad_deal("the trump card is the last one dealt")
        elif trump_card in dealt:
            raise bad_deal("the trump card is in a hand")
        trump = trump_card.suit

    blind = None
    winner = None
    if kind == "subastados":
        blind = read_bids(entry, "blind_bids", "blind_bid", number, order, cards, False)
        values = [blind[seat] for seat in order]
        winner = order[values.index(max(values))]
        chosen = entry.get("trump_suit")
        if chosen not in SPANISH_SUITS:
            raise ReplayError(number, "trump", 0, "the highest blind bidder chooses a suit")
        trump = chosen
        bids = read_bids(entry, "bids", "bid", number, order, cards, True)
    else:
        if "blind_bids" in entry:
            raise ReplayError(number, "blind_bid", 0, "no blind bids in this round")
        bids = read_bids(entry, "bids", "bid", number, order, cards, True)
        if entry.get("trump_suit") is not None and entry.get("trump_suit") != trump:
            raise ReplayError(number, "trump", 0, "trump is not chosen in this round")

    plays = entry.get("plays")
    if not isinstance(plays, list):
        raise ReplayError(number, "play", 0, "plays must be a list")
    total = cards * n
    losing_trump = table.preset == "bazas"
    won = dict.fromkeys(order, 0)
    leader = 0
    trick, seats = [], []
    for index, text in enumerate(plays):
        if index >= total:
            raise ReplayError(number, "play", index, "too many plays")
        if not isinstance(text, str) or text not in table.cards:
            raise ReplayError(number, "play", index, "not a card: %r" % (text,))
        card = table.cards[text]
        seat = order[(leader + len(trick)) % n]
        hand = hands[seat]
        if card not in hand:
            raise ReplayError(number, "play", index, "%s is not in seat %d's hand" % (text, seat))
        if card not in allowed(hand, trick, trump, losing_trump):
            raise ReplayError(number, "play", index, "%s may not be played now" % text)
        hand.remove(card)
        trick.append(card)
        seats.append(seat)
        if len(trick) == n:
            taker = winner_of(trick, seats, trump)
            won[taker] += 1
            leader = order.index(taker)
            trick, seats = [], []
    if len(plays) < total:
        raise ReplayError(number, "play", len(plays), "round incomplete")

    factor = {"c": 2, "o": 3}.get(trump, 1) if table.preset == "indias" else 1
    doubled = None
    if table.preset == "se-dobla" and cards >= 4:
        doubled = next((seat for seat in order if won[seat] == cards), None)
    points = [factor * score(bids[seat], won[seat]) * (2 if seat == doubled else 1) for seat in range(n)]
    result = {
        "number": number,
        "phase": phase,
        "cards": cards,
        "dealer": dealer,
        "trump_suit": trump,
        "multiplier": factor,
        "auction_winner": winner,
        "bids": [bids[seat] for seat in range(n)],
        "tricks": [won[seat] for seat in range(n)],
        "points": points,
    }
    if kind != "normal":
        result["kind"] = kind
    if blind is not None:
        result["blind_bids"] = [blind[seat] for seat in range(n)]
    if doubled is not None:
        result["doubled"] = doubled
    return result


def replay(record):
    """The rounds' results, the totals and whether the game is over; ReplayError at the first broken rule."""
    table = table_of(record)
    rounds = rounds_of(table)
    base = len(rounds)
    results = []
    totals = [0] * table.players
    for number, entry in enumerate(record["rounds"], start=1):
        if number > len(rounds):
            raise ReplayError(number, "deal", 0, "the game has only %d rounds" % len(rounds))
        kind, cards = rounds[number - 1]
        phase = "bajada" if kind == "desempate" else phase_of(rounds, number - 1, kind)
        result = replay_round(table, record["first_dealer"], number, kind, cards, phase, entry)
        results.append(result)
        totals = [t + p for t, p in zip(totals, result["points"])]
        tied = totals.count(max(totals)) > 1
        if number == len(rounds) and tied and table.preset != "bazas" and len(rounds) - base < 3:
            rounds.append(("desempate", table.biggest))  # the top score shared: one more round
    return results, totals, len(results) == len(rounds)


def replay_line(record):
    try:
        results, totals, complete = replay(record)
    except ReplayError as error:
        return {
            "error": {"round": error.round_number, "kind": error.kind, "index": error.index, "message": error.message}
        }
    winners = None
    if complete:
        winners = [seat for seat, total in enumerate(totals) if total == max(totals)]
    return {"rounds": results, "totals": totals, "complete": complete, "winners": winners}


def main(paths):
    status = 0
    for path in paths:
        try:
            text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()
            try:
                records = [json.loads(text)]
            except ValueError:
                records = [json.loads(line) for line in text.splitlines() if line.strip()]
        except (OSError, ValueError) as error:
            print("cannot read %s as JSON: %s" % (path, error), file=sys.stderr)
            status = 2
            continue
        for record in records:
            line = replay_line(record)
            if "error" in line and status == 0:
                status = 1
            print(json.dumps(line, ensure_ascii=False))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
