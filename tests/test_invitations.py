"""Invitations from inside the site (issue 44): the host of a waiting private table invites someone by name,
from the board or from «Amigos»; the invited person sees it in the banner of every page and in
«Invitaciones», and «Unirme» seats them as the table's code would (stake held) or «No, gracias» declines; the
table's start or cancellation expires what is still pending.  Every refusal says why and changes nothing."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse
from live.helpers import person

from accounts import ledger, social
from accounts.models import Account, Entry, Profile
from accounts.models import Transaction as LedgerTransaction
from games.models import Invitation, Seat, Table
from games.read import invitations as invitation_pages
from games.table import actions, events
from games.table.actions import invitations
from games.table.errors import ActionError
from games.table.events import PersonNotified

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


# -- helpers -------------------------------------------------------------------------------


@pytest.fixture
def notices(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, str]]:
    """The ``PersonNotified`` events delivered after a commit (the only handler while the test runs)."""
    seen: list[tuple[int, str]] = []

    def record(event: Any) -> None:
        if isinstance(event, PersonNotified):
            seen.append((event.user_id, event.kind))

    monkeypatch.setattr(events, "_handlers", [record])
    return seen


@pytest.fixture
def committed(django_capture_on_commit_callbacks: Any) -> Callable[[], Any]:
    """``with committed():`` runs what the block left for after the commit (the test's transaction never
    commits), as a real commit would; what a refusal rolled back is not run."""

    @contextmanager
    def run() -> Iterator[None]:
        with django_capture_on_commit_callbacks(execute=True):
            yield

    return run


def logged_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def world() -> dict[str, Any]:
    """Everything a refusal must leave as it was: the invitations, the seats, the tables and the books."""
    return {
        "invitations": list(Invitation.objects.order_by("pk").values_list("pk", "table_id", "recipient_id", "status")),
        "seats": list(Seat.objects.order_by("pk").values_list("pk", "table_id", "user_id")),
        "tables": list(Table.objects.order_by("pk").values_list("pk", "status", "seq")),
        "balances": dict(Account.objects.values_list("pk", "balance")),
        "transactions": sorted(LedgerTransaction.objects.values_list("key", flat=True)),
        "entries": Entry.objects.count(),
    }


def pot(table_id: int) -> int:
    return (
        Account.objects.filter(kind=Account.Kind.POT, table_id=table_id).values_list("balance", flat=True).first() or 0
    )


def prefer(user: Any, who: str) -> None:
    Profile.objects.update_or_create(user_id=user.pk, defaults={"invites_from": who})


def refused(code: str, attempt: Callable[[], Any]) -> ActionError:
    """``attempt`` is refused with ``code`` and changes nothing."""
    before = world()
    with pytest.raises(ActionError) as error:
        attempt()
    assert error.value.code == code, error.value
    assert world() == before
    return error.value


@pytest.fixture
def host() -> Any:
    return person("ana")


@pytest.fixture
def guest() -> Any:
    return person("bea")


@pytest.fixture
def table(host: Any) -> Table:
    return actions.do_create_private_table(host, 4, 500, True)


def flash_text(response: Any) -> str:
    match = re.search(r'<div id="flash"[^>]*>(.*?)</div>', response.content.decode(), re.S)
    assert match, response.content
    return match.group(1).strip()


# -- inviting ------------------------------------------------------------------------------


def test_the_host_invites_from_the_board_and_the_guest_is_told(host, guest, table, notices, committed):
    with committed():
        response = logged_in(host).post(reverse("games:invite"), {"table": table.pk, "name": "bea"}, headers=HTMX)
    assert response.status_code == 200
    assert 'hx-swap-oob="true"' in response.content.decode() and response["HX-Reswap"] == "none"
    assert flash_text(response) == "Invitación enviada a bea."
    invitation = Invitation.objects.get()
    assert (invitation.table_id, invitation.sender_id, invitation.recipient_id, invitation.status) == (
        table.pk,
        host.pk,
        guest.pk,
        Invitation.Status.PENDING,
    )
    assert notices == [(guest.pk, "invitations")]
    # Nothing moved: the guest is not seated, no chips held.
    assert not Seat.objects.filter(user=guest).exists()
    assert ledger.balance(guest.pk) == 5000


def test_the_host_board_has_invitar_and_the_guests_does_not(host, guest, table):
    page = logged_in(host).get(reverse("games:table", args=[table.pk])).content.decode()
    assert 'id="invite-form"' in page and ">Invitar</button>" in page
    assert f'name="table" value="{table.pk}"' in page
    actions.do_take_seat(table.pk, guest, code=table.code)
    page = logged_in(guest).get(reverse("games:table", args=[table.pk])).content.decode()
    assert 'id="invite-form"' not in page


def test_invitar_from_friends_goes_to_the_table_the_person_hosts(host, guest, table, committed):
    """«Amigos»' «Invitar» sends no table: the waiting private table the person hosts; none, a clear refusal."""
    with committed():
        response = logged_in(host).post(reverse("games:invite"), {"name": "bea"})
    assert response.status_code == 302
    assert Invitation.objects.get().table_id == table.pk
    assert [str(m) for m in get_messages(response.wsgi_request)] == ["Invitación enviada a bea."]
    nobody = person("carla")
    before = world()
    response = logged_in(nobody).post(reverse("games:invite"), {"name": "bea"}, headers=HTMX)
    assert flash_text(response) == "Crea antes una mesa privada para invitar."
    assert world() == before


def test_the_names_suggested_are_the_hosts_friends(host, guest):
    stranger, followed = person("carla"), person("dani")
    for a, b in ((host, guest), (guest, host), (host, followed), (stranger, host)):
        social.follow(a, b)
    response = logged_in(host).get(reverse("games:invite_names"))
    assert response.content.decode().count("<option") == 1
    assert '<option value="bea">' in response.content.decode()


# -- accepting, declining, expiring ------------------------------------------------------------


def test_unirme_seats_the_guest_with_the_stake_held_as_the_code_does(host, guest, table, notices, committed):
    invitation = invitations.do_invite(table.pk, host, "bea")
    with committed():
        response = logged_in(guest).post(reverse("games:invitation_accept", args=[invitation.pk]))
    assert response.status_code == 302 and response["Location"] == reverse("games:table", args=[table.pk])
    seat = Seat.objects.get(table=table, user=guest)
    invitation.refresh_from_db()
    assert invitation.status == Invitation.Status.ACCEPTED and invitation.answered_at is not None
    # The stake, as joining by the code holds it: one ledger transaction of the seat, guest -> pot.
    assert ledger.balance(guest.pk) == 4500 and pot(table.pk) == 1000
    held = LedgerTransaction.objects.get(key=f"stake:seat:{seat.pk}")
    assert held.kind == LedgerTransaction.Kind.STAKE and held.table_id == table.pk
    assert sorted(held.entries.values_list("amount", flat=True)) == [-500, 500]
    assert (guest.pk, "invitations") in notices
    assert Table.objects.get(pk=table.pk).status == Table.Status.WAITING  # (a private table waits for its host)


def test_unirme_by_htmx_goes_to_the_table_with_hx_redirect(host, guest, table):
    invitation = invitations.do_invite(table.pk, host, "bea")
    response = logged_in(guest).post(reverse("games:invitation_accept", args=[invitation.pk]), headers=HTMX)
    assert response.status_code == 204 and response["HX-Redirect"] == reverse("games:table", args=[table.pk])
    assert Seat.objects.filter(table=table, user=guest).exists()


def test_no_gracias_declines_and_goes_back(host, guest, table, notices, committed):
    invitation = invitations.do_invite(table.pk, host, "bea")
    with committed():
        response = logged_in(guest).post(
            reverse("games:invitation_decline", args=[invitation.pk]), HTTP_REFERER="http://testserver/torneos/"
        )
    assert response.status_code == 302 and response["Location"] == "http://testserver/torneos/"
    invitation.refresh_from_db()
    assert invitation.status == Invitation.Status.DECLINED
    assert notices == [(guest.pk, "invitations")]
    assert not Seat.objects.filter(user=guest).exists() and ledger.balance(guest.pk) == 5000
    # Declined twice, or accepted after: refused, nothing changes.
    refused("declined", lambda: invitations.do_decline(invitation.pk, guest))
    refused("declined", lambda: invitations.do_accept(invitation.pk, guest))


def test_no_gracias_by_htmx_draws_the_banner_again(host, guest, table):
    first = invitations.do_invite(table.pk, host, "bea")
    other = person("carla")
    second_table = actions.do_create_private_table(other, 3, 0, True)
    second = invitations.do_invite(second_table.pk, other, "bea")
    response = logged_in(guest).post(reverse("games:invitation_decline", args=[first.pk]), headers=HTMX)
    body = response.content.decode()
    assert response["HX-Reswap"] == "none" and 'id="invitation-banner"' in body and 'hx-swap-oob="true"' in body
    assert f'data-invitation="{second.pk}"' in body and f'data-invitation="{first.pk}"' not in body


@pytest.mark.parametrize("how", ["start", "cancel", "host leaves"])
def test_the_tables_start_or_cancellation_expires_every_pending_invitation(how, host, guest, table, notices, committed):
    carla = person("carla")
    first = invitations.do_invite(table.pk, host, "bea")
    second = invitations.do_invite(table.pk, host, "carla")
    assert f'data-invitation="{first.pk}"' in invitation_pages.banner_html(guest.pk, "es")
    with committed():
        if how == "start":
            actions.do_start(table.pk, host)
        elif how == "cancel":
            actions.do_cancel(table.pk, host)
        else:
            actions.do_leave_seat(table.pk, host)
    statuses = set(Invitation.objects.filter(pk__in=[first.pk, second.pk]).values_list("status", flat=True))
    assert statuses == {Invitation.Status.EXPIRED}
    assert {(guest.pk, "invitations"), (carla.pk, "invitations")} <= set(notices)
    # The banner is empty; accepting now is refused and changes nothing.
    assert re.fullmatch(
        r'<div id="invitation-banner"[^>]*hx-swap-oob="true"></div>',
        invitation_pages.banner_html(guest.pk, "es").strip(),
    )
    error = refused("expired", lambda: invitations.do_accept(first.pk, guest))
    assert error.message("es") == "Esa invitación ha caducado: la partida ha empezado o se ha cancelado."
    refused("expired", lambda: invitations.do_decline(second.pk, carla))


def test_an_accepted_invitation_is_not_expired_by_the_start(host, guest, table):
    invitation = invitations.do_invite(table.pk, host, "bea")
    invitations.do_accept(invitation.pk, guest)
    actions.do_start(table.pk, host)
    assert Invitation.objects.get(pk=invitation.pk).status == Invitation.Status.ACCEPTED


# -- the banner and the list ------------------------------------------------------------------


def test_the_banner_shows_the_invitation_with_its_buttons(host, guest, table):
    invitation = invitations.do_invite(table.pk, host, "bea")
    banner = invitation_pages.banner_html(guest.pk, "es")
    assert banner.startswith('<div id="invitation-banner"') and 'hx-swap-oob="true"' in banner
    assert "ana te invita a su mesa privada (Clásica, 4 jugadores, apuesta 500 fichas)" in banner
    assert ">Unirme</button>" in banner and ">No, gracias</button>" in banner
    assert f'hx-post="{reverse("games:invitation_accept", args=[invitation.pk])}"' in banner
    assert f'hx-post="{reverse("games:invitation_decline", args=[invitation.pk])}"' in banner
    english = invitation_pages.banner_html(guest.pk, "en")
    assert "ana invites you to their private table (Classic, 4 players, stake 500 chips)" in english
    assert ">Join</button>" in english and ">No, thanks</button>" in english
    # Nobody else's banner shows it.
    assert "data-invitation" not in invitation_pages.banner_html(host.pk, "es")


def test_every_page_draws_the_banner_at_load(host, guest, table):
    invitation = invitations.do_invite(table.pk, host, "bea")
    client = logged_in(guest)
    page = client.get(reverse("games:tournaments")).content.decode()
    assert f'data-invitation="{invitation.pk}"' in page and ">Unirme</button>" in page
    start = page.index('<div id="invitation-banner"')
    banner = page[start : page.index(">No, gracias</button>", start)]
    assert "csrfmiddlewaretoken" in banner  # (the forms work without JavaScript)
    assert "hx-swap-oob" not in banner
    # The host has none: an empty banner.
    page = logged_in(host).get(reverse("games:tournaments")).content.decode()
    assert re.search(r'<div id="invitation-banner"[^>]*></div>', page)


def test_a_block_after_the_invitation_hides_it_and_refuses_it(host, guest, table):
    invitation = invitations.do_invite(table.pk, host, "bea")
    social.block(guest, host)
    assert "data-invitation" not in invitation_pages.banner_html(guest.pk, "es")
    refused("blocked", lambda: invitations.do_accept(invitation.pk, guest))


def test_the_list_page_shows_pending_and_answered_ones(host, guest, table):
    pending = invitations.do_invite(table.pk, host, "bea")
    other = person("carla")
    old_table = actions.do_create_private_table(other, 3, 0, True)
    expired = invitations.do_invite(old_table.pk, other, "bea")
    actions.do_cancel(old_table.pk, other)
    page = logged_in(guest).get(reverse("games:invitations")).content.decode()
    assert page.count(f'data-invitation="{pending.pk}"') == 1  # (in the list; no banner on this page)
    row = re.search(rf'<div class="invitation answered" data-invitation="{expired.pk}".*?</div>', page, re.S)
    assert row and "caducada" in row.group(0) and "Unirme" not in row.group(0)
    assert f'action="{reverse("games:invitation_accept", args=[pending.pk])}"' in page


# -- refusals -----------------------------------------------------------------------------------


def test_only_the_host_of_a_waiting_private_table_invites(host, guest, table):
    carla = person("carla")
    actions.do_take_seat(table.pk, guest, code=table.code)
    refused("not_host", lambda: invitations.do_invite(table.pk, guest, "carla"))
    # Someone who cannot see the table: to them it does not exist.
    error = refused("unknown_table", lambda: invitations.do_invite(table.pk, carla, "bea"))
    assert error.message("es") == "Esa mesa no existe."
    for bad in ("abc", "-3", "0", "99999999999999999999999", 10**30, True, None, ["1"]):
        code = "no_table" if bad is None else "unknown_table"
        refused(code, lambda bad=bad: invitations.do_invite(bad, carla, "bea"))
    # A public table: anyone may sit there.
    dani = person("dani")
    public = actions.do_create_table(dani, 4)
    refused("public", lambda: invitations.do_invite(public.pk, dani, "carla"))


def test_a_started_table_refuses_invitations(host, guest, table):
    actions.do_start(table.pk, host)
    error = refused("not_waiting", lambda: invitations.do_invite(table.pk, host, "bea"))
    assert error.message("es") == "Esta partida ya ha empezado."


def test_a_full_table_refuses_invitations(host):
    small = actions.do_create_private_table(host, 3, 0, True)
    for name in ("bea", "carla"):
        actions.do_take_seat(small.pk, person(name), code=small.code)
    person("dani")
    refused("full", lambda: invitations.do_invite(small.pk, host, "dani"))


def test_unknown_seated_and_duplicate_names_are_refused(host, guest, table):
    for name in ("nadie-asi", "", "   ", "x" * 300, None, 7):
        error = refused("unknown_player", lambda name=name: invitations.do_invite(table.pk, host, name))
    assert error.message("es") == "No hay ningún jugador con ese nombre."
    refused("self", lambda: invitations.do_invite(table.pk, host, "ana"))
    carla = person("carla")
    actions.do_take_seat(table.pk, carla, code=table.code)
    error = refused("seated", lambda: invitations.do_invite(table.pk, host, "carla"))
    assert error.message("es") == "carla ya está sentado en esta mesa."
    invitations.do_invite(table.pk, host, " bea ")
    error = refused("pending", lambda: invitations.do_invite(table.pk, host, "bea"))
    assert error.message("es") == "Ya has invitado a bea a esta mesa."


@pytest.mark.parametrize("who_blocks", ["host", "guest"])
def test_a_block_either_way_refuses_the_invitation(who_blocks, host, guest, table):
    if who_blocks == "host":
        social.block(host, guest)
    else:
        social.block(guest, host)
    refused("blocked", lambda: invitations.do_invite(table.pk, host, "bea"))


def test_nadie_refuses_everyone_even_a_friend(host, guest, table, committed, notices):
    social.follow(host, guest)
    social.follow(guest, host)
    prefer(guest, Profile.Invites.NOBODY)
    error = refused("invites_nobody", lambda: invitations.do_invite(table.pk, host, "bea"))
    assert error.message("es") == "bea no acepta invitaciones de nadie."
    before = world()
    with committed():
        response = logged_in(host).post(reverse("games:invite"), {"table": table.pk, "name": "bea"}, headers=HTMX)
    assert flash_text(response) == "bea no acepta invitaciones de nadie."
    assert world() == before and notices == []


def test_amigos_lets_in_only_friends_and_the_people_followed(host, guest, table):
    prefer(guest, Profile.Invites.FRIENDS)
    error = refused("invites_friends", lambda: invitations.do_invite(table.pk, host, "bea"))
    assert "bea solo acepta invitaciones de sus amigos" in error.message("es")
    social.follow(host, guest)  # the host following her is not enough
    refused("invites_friends", lambda: invitations.do_invite(table.pk, host, "bea"))
    social.follow(guest, host)  # she follows the host: allowed
    assert invitations.do_invite(table.pk, host, "bea").status == Invitation.Status.PENDING


def test_forged_accept_and_decline_of_someone_elses_invitation_change_nothing(host, guest, table):
    invitation = invitations.do_invite(table.pk, host, "bea")
    carla = person("carla")
    for who in (carla, host):
        refused("unknown_invitation", lambda who=who: invitations.do_accept(invitation.pk, who))
        refused("unknown_invitation", lambda who=who: invitations.do_decline(invitation.pk, who))
    for bad in ("x", "0", -1, 10**30, None, 1.5, invitation.pk + 1000):
        refused("unknown_invitation", lambda bad=bad: invitations.do_accept(bad, guest))
    # Through the pages: refused with the reason, nothing changes.
    before = world()
    client = logged_in(carla)
    response = client.post(reverse("games:invitation_accept", args=[invitation.pk]))
    assert response.status_code == 302
    assert [str(m) for m in get_messages(response.wsgi_request)] == ["Esa invitación no existe."]
    response = client.post(reverse("games:invitation_decline", args=[invitation.pk]), headers=HTMX)
    assert response.status_code == 204 and response["HX-Redirect"] == reverse("games:invitations")
    assert world() == before
    assert Invitation.objects.get(pk=invitation.pk).status == Invitation.Status.PENDING
    # GET never answers: the forms are posts.
    assert logged_in(guest).get(reverse("games:invitation_accept", args=[invitation.pk])).status_code == 405


def test_accepting_has_the_codes_refusals_and_changes_nothing(host, guest, table):
    invitation = invitations.do_invite(table.pk, host, "bea")
    have = ledger.balance(guest.pk)
    ledger.adjust(guest.pk, 100 - have, "drain", key=f"drain:{guest.pk}")
    error = refused("chips", lambda: invitations.do_accept(invitation.pk, guest))
    assert "tienes 100" in error.message("es")
    ledger.adjust(guest.pk, have - 100, "fill", key=f"fill:{guest.pk}")
    elsewhere = actions.do_create_table(guest, 4)
    refused("live_elsewhere", lambda: invitations.do_accept(invitation.pk, guest))
    actions.do_leave_seat(elsewhere.pk, guest)
    assert Invitation.objects.get(pk=invitation.pk).status == Invitation.Status.PENDING
    invitations.do_accept(invitation.pk, guest)
    assert Seat.objects.filter(table=table, user=guest).exists()


def test_a_flood_of_invitations_is_cut_at_the_limit(host, table, settings):
    settings.POCHA_INVITE_LIMIT = 3
    names = [f"p{n}" for n in range(5)]
    for name in names:
        person(name)
    for name in names[:3]:
        invitations.do_invite(table.pk, host, name)
    error = refused("too_many", lambda: invitations.do_invite(table.pk, host, names[3]))
    assert "Demasiadas invitaciones seguidas" in error.message("es")
    assert Invitation.objects.count() == 3
    response = logged_in(host).post(reverse("games:invite"), {"table": table.pk, "name": names[4]}, headers=HTMX)
    assert flash_text(response).startswith("Demasiadas invitaciones seguidas")
    assert Invitation.objects.count() == 3


def test_the_pages_need_a_login(table):
    client = Client()
    for name, args in (("games:invitations", []), ("games:invite_names", [])):
        assert client.get(reverse(name, args=args)).status_code == 302
    before = world()
    assert client.post(reverse("games:invite"), {"table": table.pk, "name": "ana"}).status_code == 302
    assert world() == before
