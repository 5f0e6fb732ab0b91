"""``manage.py demo_table``: a table already well into its game, for a look at the card room (the
screenshots, the browser tests, a developer trying the page).

A quick table for one person and bots is started and played on until the given round has been dealt;
then it stops on the person's page as it would look in a real game.  It writes through the same
actions as the live tables: the bots move through the due path (``actions.do_due``, thinking at the
table's level from their seat's view), and the person plays the fácil bot's move from their own view.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from games.engine import levels
from games.engine.snapshot import load
from games.engine.view import seat_view
from games.models import Seat, Table
from games.table import actions


class Command(BaseCommand):
    help = "Start a table for USER with bots and play it on until ROUND is dealt (prints the table id)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--user", required=True, help="the person's username (created if missing)")
        parser.add_argument("--password", default=None, help="password for a user created here")
        parser.add_argument("--size", type=int, default=4)
        parser.add_argument("--stake", type=int, default=0)
        parser.add_argument("--round", type=int, default=1, help="stop when this round has been dealt")
        parser.add_argument("--tricks", type=int, default=0, help="then also play this many whole tricks of that round")
        parser.add_argument("--to-the-end", action="store_true", help="play the whole game")
        parser.add_argument("--bot-level", default=levels.NORMAL, help="fácil, normal (the default) or difícil")
        parser.add_argument(
            "--rules", default="clasica", help="the house rules' key (clasica, indias, se-dobla:sencillas…)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        # Every seat moves at once here; the live server's own pace applies from the moment it stops.
        settings.POCHA_BOT_DELAY = 0
        settings.POCHA_TRICK_PAUSE = 0
        settings.POCHA_ROUND_PAUSE = 0
        User = get_user_model()
        user = User.objects.filter(username=options["user"]).first()
        if user is None:
            if not options["password"]:
                raise CommandError("that user does not exist: give --password to create it")
            user = User.objects.create_user(username=options["user"], password=options["password"])
        try:
            table = actions.do_create_table(
                user,
                options["size"],
                public=True,
                quick=True,
                stake=options["stake"],
                bot_level=options["bot_level"],
                rules=options["rules"],
            )
            actions.do_start(table.pk, user)
        except actions.ActionError as error:
            raise CommandError(str(error.message("es"))) from None
        self._play_on(table.pk, user, options["round"], options["tricks"], options["to_the_end"])
        self.stdout.write(str(table.pk))

    def _play_on(self, table_id: int, user: Any, until_round: int, tricks: int, to_the_end: bool) -> None:
        for _ in range(20_000):
            table = Table.objects.get(pk=table_id)
            if table.status != Table.Status.PLAYING:
                return
            game = load(table.state)
            if not to_the_end and game.number >= until_round and game.phase.value != "round_over":
                done = sum(game.tricks) if game.phase.value == "playing" else 0
                if done >= tricks and not game.trick:
                    return
            if table.turn_seat is None:
                actions.do_due(table.pk, table.seq)
                continue
            seat = Seat.objects.get(table=table, position=table.turn_seat)
            if seat.is_bot:
                actions.do_due(table.pk, table.seq)
            else:
                view = seat_view(game, seat.position, reasons=False)
                actions.do_action(table.pk, user, levels.decide(view, levels.FACIL), table.seq)
        raise CommandError("the game did not get there")
