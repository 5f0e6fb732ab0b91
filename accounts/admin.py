"""Moderation of chips: every account and movement, read-only (chips move only through the ledger;
a correction is an adjustment: ``manage.py adjust_chips USER AMOUNT "reason"``)."""

from django.contrib import admin

from accounts.models import Account, Entry, Transaction


class ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False

    def has_change_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False

    def has_delete_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False


@admin.register(Account)
class AccountAdmin(ReadOnly):
    list_display = ("id", "kind", "user", "table", "balance")
    list_filter = ("kind",)
    search_fields = ("user__username",)


class EntryInline(admin.TabularInline):
    model = Entry
    extra = 0
    can_delete = False
    readonly_fields = ("account", "amount", "balance_after")

    def has_add_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False


@admin.register(Transaction)
class TransactionAdmin(ReadOnly):
    list_display = ("id", "created_at", "kind", "key", "table", "note")
    list_filter = ("kind",)
    search_fields = ("key", "note", "entries__account__user__username")
    inlines = [EntryInline]
