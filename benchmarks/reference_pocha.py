"""A plain, independent replay of pocha-record/1 game records.

This is the yardstick for the engine's replay speed (``python -m games.engine bench``) and a
second opinion on its results.  It implements the same rules (shared/RULES.md) and the same
replay contract (shared/RECORD.md) the way a careful engineer would write them without trying
to be clever: every card string is looked up once in a table built at import time and becomes
a small ``Card`` tuple (suit letter, strength, text); hands are sets of cards; the state of the
trick in play is the card currently winning it.  There is no caching across records and no
micro-optimisation.  It shares no code with games.engine and imports nothing from it.

For a valid record ``replay_line(record)`` returns the same line as the engine; for a record that
breaks a rule, an error naming the same round, kind and index (the messages are worded apart).

Usage: python benchmarks/reference_pocha.py FILE...   (one JSON line per record; FILE may be -)
"""

import json
import sys
from typing import NamedTuple

FORMAT = "pocha-record/1"
SUITS = ("o", "c", "e", "b")
SUIT_NAMES = {"o": "oros", "c": "copas", "e": "espadas", "b": "bastos"}
RANKS = (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)
# Strength within a suit, strongest first: 1 > 3 > 12 > 11 > 10 > 7 > 6 > 5 > 4 > 2.
STRENGTH_ORDER = (1, 3, 12, 11, 10, 7, 6, 5, 4, 2)
STRENGTH = {rank: len(STRENGTH_ORDER) - i for i, rank in enumerate(STRENGTH_ORDER)}  # ace 10 ... 2 is 1
REMOVED_RANKS = {3: {2, 4, 5, 6}, 4: {2, 4}, 5: set(), 6: set()}


class Card(NamedTuple):
    suit: str  # "o", "c", "e" or "b"
    strength: int  # higher beats lower within a suit
    text: str  # "12b"


# Every card of the Spanish deck, by its notation: the only place a card string is read.
CARDS = {}
for _suit in SUITS:
    for _rank in RANKS:
        _text = "%d%s" % (_rank, _suit)
        CARDS[_text] = Card(_suit, STRENGTH[_rank], _text)
del _suit, _rank, _text

# The deck of each table size (3 to 6 players).
DECKS = {
    players: frozenset(card for card in CARDS.values() if int(card.text[:-1]) not in removed)
    for players, removed in REMOVED_RANKS.items()
}
FIVE_OF_BASTOS = CARDS["5b"]


def parse_card(text):
    """The Card written ``text`` (``"12b"``), or None when it is not a card of the Spanish deck."""
    if not isinstance(text, str):  # also keeps unhashable JSON values (lists, dicts) out of the lookup
        return None
    return CARDS.get(text)


class ReplayError(Exception):
    """A broken rule: the round (from 1), the kind (deal, bid, trump, play) and index of the culprit."""

    def __init__(self, round_number, kind, index, message):
        super().__init__(message)
        self.round_number = round_number
        self.kind = kind
        self.index = index
        self.message = message


# -- the schedule ------------------------------------------------------------------------


def build_schedule(players):
    """(phase, cards) of every round: subida 1..8, one 8-card subasta per player, bajada 7..1."""
    return (
        [("subida", cards) for cards in range(1, 9)]
        + [("subasta", 8)] * players
        + [("bajada", cards) for cards in range(7, 0, -1)]
    )


def seats_in_order(dealer, players):
    """Seats holding cards, in dealing, bidding and first-lead order: from the dealer's left.
    At six the dealer rests, so the last seat to get cards is the one at the dealer's right."""
    seats = [(dealer + i) % players for i in range(1, players + 1)]
    if players == 6:
        seats.pop()  # the dealer, last from the left
    return seats


# -- rules -------------------------------------------------------------------------------


def score(bid, won):
    """One player's points for a round, before the multiplier."""
    if bid == won:
        return 10 + 5 * bid
    return -5 * abs(bid - won)


def allowed_cards(hand, led, best, trump):
    """The cards of ``hand`` that may be played to a trick whose led suit is ``led`` and whose
    winning card so far is ``best`` (``led`` None: leading, anything goes).

    The winning card tells everything the obligations need: if it is of the led suit, nobody has
    trumped (fallado), or trump itself was led, and it is the highest card of the led suit; if it
    is a trump over another led suit, someone has fallado and it is the highest trump."""
    if led is None:
        return hand
    same_suit = [card for card in hand if card.suit == led]
    if same_suit:
        # asistir; and montar (beat the highest of the led suit if you can) unless someone has
        # fallado. When trump was led, following suit is playing trump and the same applies.
        if best.suit == led:
            higher = [card for card in same_suit if card.strength > best.strength]
            return higher or same_suit
        return same_suit  # already trumped: any card of the led suit will do
    trumps = [card for card in hand if card.suit == trump]
    if trumps:
        # fallar; and contrafallar (beat the trump on the table if you can, else any trump)
        if best.suit == trump:
            higher = [card for card in trumps if card.strength > best.strength]
            return higher or trumps
        return trumps
    return hand  # neither the led suit nor trump: anything


def why_not(card, allowed, led, trump):
    """Words for why ``card`` may not be played when only ``allowed`` may."""
    listed = " ".join(sorted(c.text for c in allowed))
    if allowed[0].suit == led:
        if card.suit == led:
            return "must beat the highest %s on the table (%s)" % (SUIT_NAMES[led], listed)
        return "must follow suit: play %s (%s)" % (SUIT_NAMES[led], listed)
    if card.suit == trump:
        return "must play a higher trump (%s)" % listed
    return "void in %s: must play a trump (%s)" % (SUIT_NAMES[led], listed)


def beats(card, best, trump):
    """Whether ``card`` takes the trick from ``best``: higher in the same suit, or a trump over a non-trump."""
    if card.suit == best.suit:
        return card.strength > best.strength
    return card.suit == trump


def auction_winner(order, bids):
    """The highest bidder; a tie goes to whoever bid earlier (all zeros: the dealer's left)."""
    best = 0
    for i in range(1, len(bids)):
        if bids[i] > bids[best]:
            best = i
    return order[best]


def is_whole_number(value):
    return isinstance(value, int) and not isinstance(value, bool)


# -- replay ------------------------------------------------------------------------------


def check_header(record):
    def fail(message):
        return ReplayError(1, "deal", 0, message)

    if not isinstance(record, dict):
        raise fail("a record must be a JSON object")
    if record.get("format") != FORMAT:
        raise fail("format must be %r" % FORMAT)
    players = record.get("players")
    if not isinstance(players, list) or not all(isinstance(name, str) for name in players):
        raise fail("players must be a list of names")
    if not 3 <= len(players) <= 6:
        raise fail("La Pocha is played by 3 to 6")
    first_dealer = record.get("first_dealer")
    if not is_whole_number(first_dealer) or not 0 <= first_dealer < len(players):
        raise fail("first_dealer must be a seat")
    if not isinstance(record.get("rounds"), list):
        raise fail("rounds must be a list")


def read_deal(entry, number, phase, cards, players, order):
    """The hands (a set of Cards per seat) and the trump card (None in auctions) of a round."""

    def fail(message):
        return ReplayError(number, "deal", 0, message)

    raw_hands = entry.get("hands")
    if not isinstance(raw_hands, list) or not all(isinstance(hand, list) for hand in raw_hands):
        raise fail("hands must be a list of lists of cards")
    hands = []
    for raw_hand in raw_hands:
        hand = []
        for text in raw_hand:
            card = parse_card(text)
            if card is None:
                raise fail("not a card: %r" % (text,))
            hand.append(card)
        hands.append(hand)
    raw_trump = entry.get("trump_card")
    trump_card = None
    if raw_trump is not None:
        trump_card = parse_card(raw_trump)
        if trump_card is None:
            raise fail("not a card: %r" % (raw_trump,))

    if len(hands) != players:
        raise fail("expected %d hands" % players)
    deck = DECKS[players]
    dealt = set()
    for seat, hand in enumerate(hands):
        expected = cards if seat in order else 0  # the resting dealer of a 6-player table holds none
        if len(hand) != expected:
            raise fail("seat %d must hold %d cards" % (seat, expected))
        for card in hand:
            if card not in deck:
                raise fail("%s is not in the %d-player deck" % (card.text, players))
            if card in dealt:
                raise fail("%s is dealt twice" % card.text)
            dealt.add(card)

    if phase == "subasta":
        if trump_card is not None:
            raise fail("no trump card is turned in an auction round")
    else:
        if trump_card is None:
            raise fail("the trump card is missing")
        if trump_card not in deck:
            raise fail("%s is not in the deck" % trump_card.text)
        if phase == "subida" and cards == 8:
            # the deck is used up: the trump card is the last card dealt, and stays in that hand
            # (the dealer's; at six, the seat at the dealer's right, the last in order)
            if trump_card not in hands[order[-1]]:
                raise fail("the trump card must be the last card dealt")
        elif trump_card in dealt:
            raise fail("the turned trump card is in a hand")
    return [set(hand) for hand in hands], trump_card


def replay_round(players, first_dealer, number, phase, cards, entry):
    """The result of one round (the engine's round line), or ReplayError."""
    if not isinstance(entry, dict):
        raise ReplayError(number, "deal", 0, "a round must be a JSON object")
    dealer = (first_dealer + number - 1) % players
    order = seats_in_order(dealer, players)
    hands, trump_card = read_deal(entry, number, phase, cards, players, order)
    trump = trump_card.suit if trump_card is not None else None

    # bidding, from the dealer's left
    bids = entry.get("bids")
    if not isinstance(bids, list):
        raise ReplayError(number, "bid", 0, "bids must be a list")
    for index, bid in enumerate(bids):
        if index >= len(order):
            raise ReplayError(number, "bid", index, "too many bids")
        if not is_whole_number(bid) or not 0 <= bid <= cards:
            raise ReplayError(number, "bid", index, "the bid must be from 0 to %d" % cards)
        # normal rounds: the last bidder may not make the bids add up to the tricks in the round
        if phase != "subasta" and index == len(order) - 1 and sum(bids[:index]) + bid == cards:
            raise ReplayError(number, "bid", index, "the last bidder may not make the bids add up to %d" % cards)
    if len(bids) < len(order):
        raise ReplayError(number, "bid", len(bids), "missing bid")
    bid_of = dict(zip(order, bids))

    # trump: auctions are won by the highest bid, whose bidder chooses the suit
    winner = None
    chosen = entry.get("trump_suit")
    if phase == "subasta":
        winner = auction_winner(order, bids)
        if chosen not in SUITS:
            raise ReplayError(number, "trump", 0, "the auction winner must choose a suit")
        trump = chosen
    elif chosen is not None and chosen != trump:
        raise ReplayError(number, "trump", 0, "trump is not chosen in a normal round")

    # tricks: the dealer's left leads the first, the winner of each leads the next
    plays = entry.get("plays")
    if not isinstance(plays, list):
        raise ReplayError(number, "play", 0, "plays must be a list")
    expected_plays = cards * len(order)
    position_of = {seat: i for i, seat in enumerate(order)}
    won = dict.fromkeys(order, 0)
    to_play = 0  # position in ``order`` of the seat to play
    led = None  # suit led to the trick in play (None: nobody has played to it yet)
    best = best_seat = None
    played = 0  # cards in the trick so far
    for index, text in enumerate(plays):
        if index >= expected_plays:
            raise ReplayError(number, "play", index, "too many plays")
        card = parse_card(text)
        if card is None:
            raise ReplayError(number, "play", index, "not a card: %r" % (text,))
        seat = order[to_play]
        hand = hands[seat]
        if card not in hand:
            raise ReplayError(number, "play", index, "%s is not in seat %d's hand" % (card.text, seat))
        allowed = allowed_cards(hand, led, best, trump)
        if card not in allowed:
            raise ReplayError(number, "play", index, why_not(card, allowed, led, trump))
        hand.remove(card)
        if led is None:
            led, best, best_seat = card.suit, card, seat
        elif beats(card, best, trump):
            best, best_seat = card, seat
        played += 1
        if played == len(order):  # the trick is complete
            won[best_seat] += 1
            to_play = position_of[best_seat]
            led = best = best_seat = None
            played = 0
        else:
            to_play = (to_play + 1) % len(order)
    if len(plays) < expected_plays:
        raise ReplayError(number, "play", len(plays), "round incomplete")

    # scoring: x3 when the card marking trump is the 5 of bastos (normal rounds only, and it is not
    # in the 3-player deck), else x2 when oros is trump, turned or chosen; they never stack
    if trump_card == FIVE_OF_BASTOS and players != 3:
        factor = 3
    elif trump == "o":
        factor = 2
    else:
        factor = 1
    result = {
        "number": number,
        "phase": phase,
        "cards": cards,
        "dealer": dealer,
        "trump_suit": trump,
        "multiplier": factor,
        "auction_winner": winner,
        "bids": [],
        "tricks": [],
        "points": [],
    }
    for seat in range(players):
        if seat in bid_of:
            result["bids"].append(bid_of[seat])
            result["tricks"].append(won[seat])
            result["points"].append(factor * score(bid_of[seat], won[seat]))
        else:  # the resting dealer of a 6-player table: a fixed +10, never multiplied
            result["bids"].append(None)
            result["tricks"].append(None)
            result["points"].append(10)
    return result


def replay(record):
    """The results of the rounds of ``record`` and whether it is a whole game; ReplayError at the
    first broken rule."""
    check_header(record)
    players = len(record["players"])
    schedule = build_schedule(players)
    results = []
    for number, entry in enumerate(record["rounds"], start=1):
        if number > len(schedule):
            raise ReplayError(number, "deal", 0, "a game of %d has only %d rounds" % (players, len(schedule)))
        phase, cards = schedule[number - 1]
        results.append(replay_round(players, record["first_dealer"], number, phase, cards, entry))
    return results, len(results) == len(schedule)


def replay_line(record):
    """The line ``python -m games.engine replay`` prints for ``record``, as a dict."""
    try:
        rounds, complete = replay(record)
    except ReplayError as error:
        return {
            "error": {"round": error.round_number, "kind": error.kind, "index": error.index, "message": error.message}
        }
    players = len(record["players"])
    totals = [0] * players
    for result in rounds:
        for seat, points in enumerate(result["points"]):
            totals[seat] += points
    winners = None
    if complete:
        best = max(totals)
        winners = [seat for seat in range(players) if totals[seat] == best]
    return {"rounds": rounds, "totals": totals, "complete": complete, "winners": winners}


def read_records(text):
    """One JSON document, or JSON Lines."""
    try:
        return [json.loads(text)]
    except ValueError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def main(paths):
    status = 0
    for path in paths:
        try:
            if path == "-":
                text = sys.stdin.read()
            else:
                with open(path, encoding="utf-8") as handle:
                    text = handle.read()
            records = read_records(text)
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
