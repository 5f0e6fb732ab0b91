"""The game's log becomes its truth: one ``Move`` row per accepted decision and one ``Round`` row per deal.

Every stored game is carried over: its moves are written from its engine state's log (the history the
record download was made from), in the order the engine accepted them, with the clock's and the bot's
flags of the old bid, trump and play rows; every finished round's result goes on its round row; the table's
state keeps only the round in play (``dump(game, history=False)``).  Then the old rows and columns go.
The moves of a game carried over are numbered 1, 2, … (a table's ``seq`` counted every change, not only
moves, so the table's own ``seq`` is past them and its next move's is new).  Not reversible: the old rows
held nothing the log does not.
"""

import django.db.models.deletion
from django.db import migrations, models


def carry_over(apps, schema_editor):
    Table = apps.get_model("games", "Table")
    Round = apps.get_model("games", "Round")
    Move = apps.get_model("games", "Move")
    Bid = apps.get_model("games", "Bid")
    Play = apps.get_model("games", "Play")
    for table in Table.objects.exclude(state=None).iterator(chunk_size=200):
        if isinstance(table.state, dict) and table.state.get("log"):
            _carry_table(table, Table, Round, Move, Bid, Play)


def _carry_table(table, Table, Round, Move, Bid, Play):
    from games.engine import Bid as BidAction
    from games.engine import Card, ChooseTrump, Phase, Suit
    from games.engine import Play as PlayAction
    from games.engine.snapshot import dump, load
    from games.engine.state import GameState

    state = table.state
    rounds = {r.number: r for r in Round.objects.filter(table_id=table.pk)}
    flags = {}
    for number, index, by_bot, by_clock, made in Bid.objects.filter(round__table_id=table.pk).values_list(
        "round__number", "index", "by_bot", "by_clock", "created_at"
    ):
        flags[("b", number, index)] = (by_bot, by_clock, made)
    for number, index, by_bot, by_clock, made in Play.objects.filter(round__table_id=table.pk).values_list(
        "round__number", "index", "by_bot", "by_clock", "created_at"
    ):
        flags[("p", number, index)] = (by_bot, by_clock, made)
    game = GameState(list(state["names"]), int(state["first_dealer"]))
    moves = []
    made_at = table.started_at or table.created_at
    seq = 0

    def add(number, index, kind, seat, value, by_bot=False, by_clock=False):
        nonlocal seq, made_at
        found = flags.get((kind, number, index))
        if found is not None:
            by_bot, by_clock, made_at = found
        seq += 1
        moves.append(
            Move(
                table_id=table.pk,
                seq=seq,
                round=number,
                seat=seat,
                kind=kind,
                value=value,
                by_bot=by_bot,
                by_clock=by_clock,
                made_at=made_at,
            )
        )

    for number, entry in enumerate(state["log"], start=1):
        game.deal(
            [[Card.parse(c) for c in hand] for hand in entry["hands"]],
            None if entry["trump_card"] is None else Card.parse(entry["trump_card"]),
        )
        for index, amount in enumerate(entry["bids"]):
            seat = game.turn
            game.apply(BidAction(int(amount)), seat)
            add(number, index, "b", seat, str(amount))
        if game.phase is Phase.CHOOSING_TRUMP and entry.get("trump_suit"):
            seat = game.turn
            game.apply(ChooseTrump(Suit.parse(entry["trump_suit"])), seat)
            row = rounds.get(number)
            add(
                number,
                0,
                "t",
                seat,
                entry["trump_suit"],
                by_bot=bool(row and row.trump_by_bot),
                by_clock=bool(row and row.trump_by_clock),
            )
        for index, card in enumerate(entry["plays"]):
            seat = game.turn
            game.apply(PlayAction(Card.parse(card)), seat)
            add(number, index, "p", seat, card)
    Move.objects.bulk_create(moves)
    for result in state.get("results", []):
        Round.objects.filter(table_id=table.pk, number=result["number"]).update(result=result)
    Table.objects.filter(pk=table.pk).update(state=dump(load(state), history=False))


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0010_table_cancel_reason"),
    ]

    operations = [
        migrations.AddField(
            model_name="round",
            name="result",
            field=models.JSONField(blank=True, null=True, verbose_name="resultado"),
        ),
        migrations.CreateModel(
            name="Move",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("seq", models.PositiveIntegerField(verbose_name="versión")),
                ("round", models.PositiveSmallIntegerField(verbose_name="ronda")),
                ("seat", models.PositiveSmallIntegerField(verbose_name="asiento")),
                (
                    "kind",
                    models.CharField(
                        choices=[("b", "pedido"), ("t", "triunfo"), ("p", "carta")], max_length=1, verbose_name="tipo"
                    ),
                ),
                ("value", models.CharField(max_length=3, verbose_name="valor")),
                ("by_clock", models.BooleanField(default=False, verbose_name="por el reloj")),
                ("by_bot", models.BooleanField(default=False, verbose_name="por el bot")),
                ("made_at", models.DateTimeField(verbose_name="hecha el")),
                (
                    "table",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="moves",
                        to="games.table",
                        verbose_name="mesa",
                    ),
                ),
            ],
            options={
                "verbose_name": "jugada",
                "verbose_name_plural": "jugadas",
                "ordering": ["table", "seq"],
            },
        ),
        migrations.AddConstraint(
            model_name="move",
            constraint=models.UniqueConstraint(fields=("table", "seq"), name="move_unique_seq"),
        ),
        migrations.RunPython(carry_over, elidable=False),
        migrations.RemoveField(
            model_name="round",
            name="auction_winner",
        ),
        migrations.RemoveField(
            model_name="round",
            name="points",
        ),
        migrations.RemoveField(
            model_name="round",
            name="trump_by_bot",
        ),
        migrations.RemoveField(
            model_name="round",
            name="trump_by_clock",
        ),
        migrations.RemoveField(
            model_name="round",
            name="trump_suit",
        ),
        migrations.DeleteModel(
            name="Play",
        ),
        migrations.DeleteModel(
            name="Trick",
        ),
        migrations.DeleteModel(
            name="Bid",
        ),
    ]
