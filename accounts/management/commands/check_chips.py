"""Audit the books: every transaction sums to zero, all accounts sum to zero, balances match entries."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from accounts import ledger
from accounts.models import Account, Transaction


class Command(BaseCommand):
    help = "Check that the chip ledger balances; exits non-zero and lists every problem if it does not."

    def handle(self, *args: Any, **options: Any) -> None:
        problems = ledger.audit()
        for problem in problems:
            self.stderr.write(problem)
        if problems:
            raise CommandError(f"{len(problems)} problem(s) in the chip ledger")
        self.stdout.write(
            f"ok: {Account.objects.count()} accounts, {Transaction.objects.count()} transactions, every one balances"
        )
