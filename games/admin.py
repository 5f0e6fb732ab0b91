"""Moderation: see tables, who sits where, and every round's bids and cards."""

from django.contrib import admin

from games.models import Bid, Play, Round, Seat, Table, Trick


class SeatInline(admin.TabularInline):
    model = Seat
    extra = 0
    fields = ("position", "user", "is_bot", "name", "away", "timeouts", "sockets")
    readonly_fields = ("position", "is_bot", "sockets")


@admin.register(Table)
class TableAdmin(admin.ModelAdmin):
    list_display = ("id", "size", "status", "is_public", "is_quick", "round_number", "turn_seat", "seq", "created_at")
    list_filter = ("status", "size", "is_public", "is_quick")
    search_fields = ("seats__name",)
    readonly_fields = ("seq", "seed", "first_dealer", "phase", "round_number", "turn_seat", "due_at",
                       "turn_deadline", "started_at", "finished_at")
    exclude = ("state",)
    inlines = [SeatInline]


class BidInline(admin.TabularInline):
    model = Bid
    extra = 0
    readonly_fields = ("index", "seat", "amount", "by_clock", "by_bot", "created_at")
    can_delete = False


@admin.register(Round)
class RoundAdmin(admin.ModelAdmin):
    list_display = ("table", "number", "dealer", "trump_card", "trump_suit", "auction_winner")
    list_filter = ("table__size",)
    readonly_fields = ("table", "number", "dealer", "seed", "hands", "trump_card", "trump_suit", "auction_winner",
                       "trump_by_clock", "points")
    inlines = [BidInline]


@admin.register(Trick)
class TrickAdmin(admin.ModelAdmin):
    list_display = ("round", "number", "leader", "winner")


@admin.register(Play)
class PlayAdmin(admin.ModelAdmin):
    list_display = ("round", "index", "seat", "card", "by_clock", "by_bot")
