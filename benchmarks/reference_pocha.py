"""A straightforward, independent replay of pocha-record/1 game records.

This is the yardstick for the engine's replay speed (``python -m games.engine bench``)
and a second opinion on its results: it implements the same rules (shared/RULES.md)
and the same replay contract (shared/RECORD.md) the plain way -- cards are strings
parsed when they are needed, hands are lists, what may be played is worked out by
scanning the hand, and the game is a dict.  It shares no code with games.engine.

Usage: python benchmarks/reference_pocha.py FILE...   (one JSON line per record)
"""

import json
import sys

FORMAT = "pocha-record/1"
SUIT_LETTERS = ["o", "c", "e", "b"]
SUIT_NAMES = {"o": "oros", "c": "copas", "e": "espadas", "b": "bastos"}
ALL_RANKS = [1, 2, 3, 4, 5, 6, 7, 10, 11, 12]
RANK_TEXTS = ["1", "2", "3", "4", "5", "6", "7", "10", "11", "12"]
# strongest first
STRENGTH_ORDER = [1, 3, 12, 11, 10, 7, 6, 5, 4, 2]
REMOVED_RANKS = {3: [2, 4, 5, 6], 4: [2, 4], 5: [], 6: []}


class ReplayError(Exception):
    def __init__(self, round_number, kind, index, message):
        super().__init__(message)
        self.round_number = round_number
        self.kind = kind
        self.index = index
        self.message = message


# -- cards -----------------------------------------------------------------------------

def parse_card(text):
    """'12b' -> (12, 'b'); None if it is not a card of the Spanish deck."""
    if not isinstance(text, str) or len(text) < 2:
        return None
    rank_text = text[:-1]
    suit = text[-1]
    if suit not in SUIT_LETTERS or rank_text not in RANK_TEXTS:
        return None
    return (int(rank_text), suit)


def is_card(text):
    return parse_card(text) is not None


def suit_of(text):
    return parse_card(text)[1]


def strength_of(text):
    """Higher is stronger: the ace is 10, the 2 is 1."""
    rank = parse_card(text)[0]
    return len(STRENGTH_ORDER) - STRENGTH_ORDER.index(rank)


def build_deck(players):
    deck = []
    for suit in SUIT_LETTERS:
        for rank in ALL_RANKS:
            if rank not in REMOVED_RANKS[players]:
                deck.append(str(rank) + suit)
    return deck


# -- the schedule ------------------------------------------------------------------------

def build_schedule(players):
    rounds = []
    for cards in range(1, 9):
        rounds.append({"phase": "subida", "cards": cards})
    for _ in range(players):
        rounds.append({"phase": "subasta", "cards": 8})
    for cards in range(7, 0, -1):
        rounds.append({"phase": "bajada", "cards": cards})
    for number, spec in enumerate(rounds, start=1):
        spec["number"] = number
    return rounds


def seats_in_order(dealer, players):
    """Seats holding cards, from the dealer's left; at six the dealer rests."""
    seats = []
    for i in range(1, players + 1):
        seats.append((dealer + i) % players)
    if players == 6:
        seats.remove(dealer)
    return seats


# -- rules -------------------------------------------------------------------------------

def score(bid, won):
    if bid == won:
        return 10 + 5 * bid
    return -5 * abs(bid - won)


def allowed_cards(hand, table, trump):
    """The cards of ``hand`` that may be played on ``table`` (the cards of the trick so far)."""
    if len(table) == 0:
        return list(hand)
    led = suit_of(table[0])
    same_suit = [card for card in hand if suit_of(card) == led]
    if same_suit:
        trumped = False
        for card in table:
            if suit_of(card) == trump and led != trump:
                trumped = True
        if trumped:
            return same_suit
        highest = 0
        for card in table:
            if suit_of(card) == led and strength_of(card) > highest:
                highest = strength_of(card)
        beating = [card for card in same_suit if strength_of(card) > highest]
        if beating:
            return beating
        return same_suit
    trumps = [card for card in hand if suit_of(card) == trump]
    if trumps:
        highest_trump = 0
        for card in table:
            if suit_of(card) == trump and strength_of(card) > highest_trump:
                highest_trump = strength_of(card)
        beating = [card for card in trumps if strength_of(card) > highest_trump]
        if beating:
            return beating
        return trumps
    return list(hand)


def why_not(card, hand, table, trump):
    """Words for why ``card`` (in ``hand``) may not be played on ``table``."""
    allowed = allowed_cards(hand, table, trump)
    led = suit_of(table[0])
    listed = " ".join(allowed)
    if suit_of(allowed[0]) == led:
        if suit_of(card) == led:
            return "must beat the highest %s on the table (%s)" % (SUIT_NAMES[led], listed)
        return "must follow suit: play %s (%s)" % (SUIT_NAMES[led], listed)
    if suit_of(card) == trump:
        return "must play a higher trump (%s)" % listed
    return "void in %s: must play a trump (%s)" % (SUIT_NAMES[led], listed)


def winner_of_trick(trick, trump):
    """``trick`` is a list of (seat, card); the seat that takes it."""
    best_seat, best_card = trick[0]
    for seat, card in trick[1:]:
        if suit_of(card) == suit_of(best_card):
            if strength_of(card) > strength_of(best_card):
                best_seat, best_card = seat, card
        elif suit_of(card) == trump:
            best_seat, best_card = seat, card
    return best_seat


def auction_winner(order, bids):
    best = 0
    for i in range(len(bids)):
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
    if not isinstance(players, list):
        raise fail("players must be a list of names")
    for name in players:
        if not isinstance(name, str):
            raise fail("players must be a list of names")
    if len(players) < 3 or len(players) > 6:
        raise fail("La Pocha is played by 3 to 6")
    first_dealer = record.get("first_dealer")
    if not is_whole_number(first_dealer) or first_dealer < 0 or first_dealer >= len(players):
        raise fail("first_dealer must be a seat")
    if not isinstance(record.get("rounds"), list):
        raise fail("rounds must be a list")


def check_hands(game, spec, number, entry, order):
    players = game["players"]
    hands = entry.get("hands")
    if not isinstance(hands, list):
        raise ReplayError(number, "deal", 0, "hands must be a list of lists of cards")
    for hand in hands:
        if not isinstance(hand, list):
            raise ReplayError(number, "deal", 0, "hands must be a list of lists of cards")
        for card in hand:
            if not is_card(card):
                raise ReplayError(number, "deal", 0, "not a card: %r" % (card,))
    trump_card = entry.get("trump_card")
    if trump_card is not None and not is_card(trump_card):
        raise ReplayError(number, "deal", 0, "not a card: %r" % (trump_card,))
    if len(hands) != players:
        raise ReplayError(number, "deal", 0, "expected %d hands" % players)
    deck = build_deck(players)
    dealt = []
    for seat in range(players):
        expected = spec["cards"] if seat in order else 0
        if len(hands[seat]) != expected:
            raise ReplayError(number, "deal", 0, "seat %d must hold %d cards" % (seat, expected))
        for card in hands[seat]:
            if card not in deck:
                raise ReplayError(number, "deal", 0, "%s is not in the %d-player deck" % (card, players))
            if card in dealt:
                raise ReplayError(number, "deal", 0, "%s is dealt twice" % card)
            dealt.append(card)
    if spec["phase"] == "subasta":
        if trump_card is not None:
            raise ReplayError(number, "deal", 0, "no trump card is turned in an auction round")
        return None
    if trump_card is None:
        raise ReplayError(number, "deal", 0, "the trump card is missing")
    if trump_card not in deck:
        raise ReplayError(number, "deal", 0, "%s is not in the deck" % trump_card)
    if spec["phase"] == "subida" and spec["cards"] == 8:
        last = order[-1]
        if trump_card not in hands[last]:
            raise ReplayError(number, "deal", 0, "the trump card must be the last card dealt")
    elif trump_card in dealt:
        raise ReplayError(number, "deal", 0, "the turned trump card is in a hand")
    return trump_card


def replay_round(game, spec, number, entry):
    players = game["players"]
    if not isinstance(entry, dict):
        raise ReplayError(number, "deal", 0, "a round must be a JSON object")
    dealer = (game["first_dealer"] + number - 1) % players
    order = seats_in_order(dealer, players)
    trump_card = check_hands(game, spec, number, entry, order)
    hands = [list(hand) for hand in entry["hands"]]
    trump = suit_of(trump_card) if trump_card is not None else None

    # bidding
    bids = entry.get("bids")
    if not isinstance(bids, list):
        raise ReplayError(number, "bid", 0, "bids must be a list")
    said = []
    bid_by_seat = {}
    for index in range(len(bids)):
        bid = bids[index]
        if index >= len(order):
            raise ReplayError(number, "bid", index, "too many bids")
        if not is_whole_number(bid) or bid < 0 or bid > spec["cards"]:
            raise ReplayError(number, "bid", index, "the bid must be from 0 to %d" % spec["cards"])
        is_last = index == len(order) - 1
        if spec["phase"] != "subasta" and is_last and sum(said) + bid == spec["cards"]:
            raise ReplayError(number, "bid", index, "the last bidder may not make the bids add up to %d"
                              % spec["cards"])
        said.append(bid)
        bid_by_seat[order[index]] = bid
    if len(bids) < len(order):
        raise ReplayError(number, "bid", len(bids), "missing bid")

    # trump
    winner = None
    chosen = entry.get("trump_suit")
    if spec["phase"] == "subasta":
        winner = auction_winner(order, said)
        if chosen not in SUIT_LETTERS:
            raise ReplayError(number, "trump", 0, "the auction winner must choose a suit")
        trump = chosen
    elif chosen is not None and chosen != trump:
        raise ReplayError(number, "trump", 0, "trump is not chosen in a normal round")

    # tricks
    plays = entry.get("plays")
    if not isinstance(plays, list):
        raise ReplayError(number, "play", 0, "plays must be a list")
    expected_plays = spec["cards"] * len(order)
    won = {seat: 0 for seat in order}
    leader = order[0]
    trick = []
    for index in range(len(plays)):
        if index >= expected_plays:
            raise ReplayError(number, "play", index, "too many plays")
        card = plays[index]
        if not is_card(card):
            raise ReplayError(number, "play", index, "not a card: %r" % (card,))
        position = order.index(leader) + len(trick)
        seat = order[position % len(order)]
        hand = hands[seat]
        if card not in hand:
            raise ReplayError(number, "play", index, "%s is not in seat %d's hand" % (card, seat))
        table = [played for _, played in trick]
        if card not in allowed_cards(hand, table, trump):
            raise ReplayError(number, "play", index, why_not(card, hand, table, trump))
        hand.remove(card)
        trick.append((seat, card))
        if len(trick) == len(order):
            leader = winner_of_trick(trick, trump)
            won[leader] += 1
            trick = []
    if len(plays) < expected_plays:
        raise ReplayError(number, "play", len(plays), "round incomplete")

    # scoring
    if spec["phase"] != "subasta" and trump_card == "5b" and players != 3:
        factor = 3
    elif trump == "o":
        factor = 2
    else:
        factor = 1
    result = {
        "number": number,
        "phase": spec["phase"],
        "cards": spec["cards"],
        "dealer": dealer,
        "trump_suit": trump,
        "multiplier": factor,
        "auction_winner": winner,
        "bids": [],
        "tricks": [],
        "points": [],
    }
    for seat in range(players):
        if seat in order:
            result["bids"].append(bid_by_seat[seat])
            result["tricks"].append(won[seat])
            result["points"].append(factor * score(bid_by_seat[seat], won[seat]))
        else:
            result["bids"].append(None)
            result["tricks"].append(None)
            result["points"].append(10)
    return result


def replay(record):
    """The finished rounds of ``record``; ReplayError at the first broken rule."""
    check_header(record)
    players = len(record["players"])
    game = {"players": players, "first_dealer": record["first_dealer"]}
    schedule = build_schedule(players)
    results = []
    for number, entry in enumerate(record["rounds"], start=1):
        if number > len(schedule):
            raise ReplayError(number, "deal", 0, "a game of %d has only %d rounds" % (players, len(schedule)))
        results.append(replay_round(game, schedule[number - 1], number, entry))
    return results, len(results) == len(schedule)


def replay_line(record):
    """The line ``python -m games.engine replay`` prints for ``record``, as a dict."""
    try:
        rounds, complete = replay(record)
    except ReplayError as error:
        return {"error": {"round": error.round_number, "kind": error.kind, "index": error.index,
                          "message": error.message}}
    players = len(record["players"])
    totals = [0] * players
    for result in rounds:
        for seat in range(players):
            totals[seat] += result["points"][seat]
    winners = None
    if complete:
        best = max(totals)
        winners = [seat for seat in range(players) if totals[seat] == best]
    return {"rounds": rounds, "totals": totals, "complete": complete, "winners": winners}


def read_records(text):
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
