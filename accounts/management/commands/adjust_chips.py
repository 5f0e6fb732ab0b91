"""A moderator's correction of a player's chips, recorded in the ledger with its reason."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts import ledger


class Command(BaseCommand):
    help = "Give (or take, with a negative amount) chips to a player, from the grants account, with a reason."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("amount", type=int)
        parser.add_argument("reason")

    def handle(self, *args: Any, username: str, amount: int, reason: str, **options: Any) -> None:
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no such player: {username}")
        if amount == 0:
            raise CommandError("the amount must not be 0")
        try:
            ledger.adjust(user.pk, amount, reason, uuid.uuid4().hex)
        except ledger.InsufficientChips as error:
            raise CommandError(f"{username} has {error.balance} chips: cannot take {-amount}") from None
        self.stdout.write(f"{username}: {ledger.balance(user.pk)} chips")
