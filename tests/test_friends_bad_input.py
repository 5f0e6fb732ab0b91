"""Bad input to the friends and invitation forms (issue 44), through the site's own views: each gets a clear
refusal to the sender alone and changes nothing.

What is already covered elsewhere is not repeated here: the unknown, empty and over-long names of the follow
and block forms, their forged ``follower``/``user``/``blocker`` fields, their flood past ``POCHA_FOLLOW_LIMIT``,
a GET and a missing CSRF token on «Seguir» (tests/test_friends_pages.py); the invitation rules called directly
(tests/test_invitations.py, including the flood past ``POCHA_INVITE_LIMIT``).  Here:

* forged actor fields on every form (unfollow, unblock, the preference, «Invitar», «Unirme», «No, gracias»);
* every one of those posts without a login, as a GET (or another method), without the CSRF token, or with a
  NUL byte: refused, nothing written;
* names nobody has (control characters, look-alike letters, ten thousand letters), to every form;
* «Invitar» through the form to tables one may not invite to: someone else's, a public one, one that has
  started, finished or been cancelled, an unknown, non-numeric or huge id;
* «Unirme» / «No, gracias» through the form for an invitation answered, expired, someone else's or unknown;
* a flood of follows made by following and unfollowing one person over and over.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from live.helpers import person, play_to_the_end

from accounts import ledger, social
from accounts.models import Account, Block, Entry, Follow, Profile
from accounts.models import Transaction as LedgerTransaction
from games.models import Invitation, Seat, Table
from games.table import actions, events
from games.table.actions import invitations
from games.table.events import PersonNotified

pytestmark = pytest.mark.django_db

FOLLOW = "/amigos/seguir/"
UNFOLLOW = "/amigos/dejar-de-seguir/"
BLOCK = "/amigos/bloquear/"
UNBLOCK = "/amigos/desbloquear/"
PREFERENCE = "/amigos/invitaciones/"
INVITE = "/invitaciones/invitar/"
HTMX = {"HX-Request": "true"}
FRIEND_FORMS = (FOLLOW, UNFOLLOW, BLOCK, UNBLOCK)

UNKNOWN_PLAYER = "No hay ningún jugador con ese nombre."
UNKNOWN_TABLE = "Esa mesa no existe."
UNKNOWN_INVITATION = "Esa invitación no existe."
BAD_BYTES = "La dirección o el formulario llevan caracteres que no pueden llevar."
TOO_MANY = "Demasiados cambios seguidos: espera un poco antes de seguir o bloquear a más gente."


def accept_url(invitation_id: int | str) -> str:
    return f"/invitaciones/{invitation_id}/unirme/"


def decline_url(invitation_id: int | str) -> str:
    return f"/invitaciones/{invitation_id}/no/"


def signed_in(user: Any, **kwargs: Any) -> Client:
    client = Client(**kwargs)
    client.force_login(user)
    return client


def said(response: Any) -> list[str]:
    """The messages this very post left for the page it goes back to (not those still kept from the last)."""
    return [str(m) for m in response.wsgi_request._messages._queued_messages]


def flash_text(response: Any) -> str:
    match = re.search(r'<div id="flash"[^>]*>(.*?)</div>', response.content.decode(), re.S)
    assert match, response.content
    return match.group(1).strip()


def world() -> dict[str, Any]:
    """Everything a refused post must leave as it was: relations, preferences, invitations, tables, seats and
    the books."""
    return {
        "follows": sorted(Follow.objects.values_list("follower_id", "followee_id")),
        "blocks": sorted(Block.objects.values_list("blocker_id", "blocked_id")),
        "preferences": sorted(Profile.objects.values_list("user_id", "invites_from")),
        "invitations": sorted(
            Invitation.objects.values_list("pk", "table_id", "sender_id", "recipient_id", "status", "answered_at")
        ),
        "tables": sorted(Table.objects.values_list("pk", "status", "seq")),
        "seats": sorted(Seat.objects.values_list("pk", "table_id", "user_id")),
        "balances": sorted(Account.objects.values_list("pk", "balance")),
        "transactions": LedgerTransaction.objects.count(),
        "entries": Entry.objects.count(),
    }


@pytest.fixture
def notices(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, str]]:
    """Every ``PersonNotified`` emitted, as it is emitted (the test's transaction never commits: a refusal must
    not even ask to tell anybody anything)."""
    seen: list[tuple[int, str]] = []

    def record(event: Any) -> None:
        if isinstance(event, PersonNotified):
            seen.append((event.user_id, event.kind))

    monkeypatch.setattr(events, "emit", record)
    return seen


@pytest.fixture
def cast() -> dict[str, Any]:
    """ana follows beto and has blocked dani; carla (the one who posts) follows beto too; bea hosts a waiting
    private table with an invitation pending to carla."""
    ana, beto, carla, dani, bea = (person(n) for n in ("ana", "beto", "carla", "dani", "bea"))
    social.follow(ana, beto)
    social.follow(carla, beto)
    social.block(ana, dani)
    table = actions.do_create_private_table(bea, 4, 100, True)
    invitation = invitations.do_invite(table.pk, bea, "carla")
    return {
        "ana": ana,
        "beto": beto,
        "carla": carla,
        "dani": dani,
        "bea": bea,
        "table": table,
        "invitation": invitation,
    }


def forged_as(user: Any) -> dict[str, str]:
    """Every field a forger might hope names the actor, all naming ``user``."""
    fields = {}
    for field in ("follower", "followee", "user", "sender", "blocker", "recipient", "actor", "owner", "by"):
        fields[field] = str(user.pk)
        fields[f"{field}_id"] = str(user.pk)
    fields["username"] = user.get_username()
    return fields


# -- forged actors ------------------------------------------------------------------------------------------


def test_a_forged_unfollow_ends_only_the_senders_own_follow(cast: dict[str, Any]) -> None:
    ana, beto, carla = cast["ana"], cast["beto"], cast["carla"]
    response = signed_in(carla).post(f"{UNFOLLOW}?follower={ana.pk}", {"name": "beto", **forged_as(ana)})
    assert said(response) == ["Has dejado de seguir a beto."]
    assert Follow.objects.filter(follower=ana, followee=beto).exists(), "ana's follow is not carla's to end"
    assert not Follow.objects.filter(follower=carla).exists()
    # a second time there is nothing of carla's to end, and ana's still stands
    assert said(signed_in(carla).post(UNFOLLOW, {"name": "beto", **forged_as(ana)})) == ["No seguías a beto."]
    assert Follow.objects.filter(follower=ana, followee=beto).exists()


def test_a_forged_unblock_cannot_lift_someone_elses_block(cast: dict[str, Any]) -> None:
    ana, dani, carla = cast["ana"], cast["dani"], cast["carla"]
    before = world()
    # a bystander naming the blocked person, and the blocked person naming the blocker, both as ana
    for sender, name in ((carla, "dani"), (dani, "ana")):
        response = signed_in(sender).post(f"{UNBLOCK}?blocker={ana.pk}", {"name": name, **forged_as(ana)})
        assert said(response) == [f"No tenías bloqueado a {name}."]
    assert world() == before
    assert social.between(ana.pk, dani.pk)


def test_a_forged_follow_or_block_changes_only_the_senders_relations(cast: dict[str, Any]) -> None:
    ana, carla = cast["ana"], cast["carla"]
    emma = person("emma")
    signed_in(carla).post(FOLLOW, {"name": "emma", **forged_as(ana)})
    assert set(Follow.objects.filter(followee=emma).values_list("follower_id", flat=True)) == {carla.pk}
    social.follow(ana, emma)
    signed_in(carla).post(BLOCK, {"name": "emma", **forged_as(ana)})
    assert set(Block.objects.filter(blocked=emma).values_list("blocker_id", flat=True)) == {carla.pk}
    assert Follow.objects.filter(follower=ana, followee=emma).exists(), "carla's block ends no follow of ana's"


def test_a_forged_preference_changes_only_the_senders(cast: dict[str, Any]) -> None:
    ana, carla = cast["ana"], cast["carla"]
    response = signed_in(carla).post(PREFERENCE, {"invites_from": "nobody", **forged_as(ana)})
    assert said(response) == ["Ahora no puede invitarte nadie."]
    assert social.invites_from(carla.pk) == Profile.Invites.NOBODY
    assert social.invites_from(ana.pk) == Profile.Invites.EVERYONE


def test_a_forged_invitation_is_sent_by_the_signed_in_person_or_not_at_all(cast: dict[str, Any]) -> None:
    ana, bea, carla, table = cast["ana"], cast["bea"], cast["carla"], cast["table"]
    # carla names bea as the sender, to bea's table: to carla that table does not exist
    before = world()
    response = signed_in(carla).post(INVITE, {"table": table.pk, "name": "ana", **forged_as(bea)})
    assert said(response) == [UNKNOWN_TABLE]
    assert world() == before
    # at a table of carla's own, the invitation is carla's, whoever the form names
    own = actions.do_create_private_table(carla, 4, 0, True)
    response = signed_in(carla).post(INVITE, {"table": own.pk, "name": "ana", **forged_as(bea)})
    assert said(response) == ["Invitación enviada a ana."]
    sent = Invitation.objects.get(table=own)
    assert (sent.sender_id, sent.recipient_id) == (carla.pk, ana.pk)
    assert Invitation.objects.filter(sender=bea).count() == 1  # only the one bea really sent


@pytest.mark.parametrize("answer", ["accept", "decline"])
def test_answering_someone_elses_invitation_with_forged_fields_is_refused(cast: dict[str, Any], answer: str) -> None:
    carla, ana, invitation = cast["carla"], cast["ana"], cast["invitation"]
    url = accept_url(invitation.pk) if answer == "accept" else decline_url(invitation.pk)
    before = world()
    for sender in (ana, cast["bea"]):  # a stranger, and the one who sent it
        response = signed_in(sender).post(url, forged_as(carla))
        assert response.status_code == 302 and said(response) == [UNKNOWN_INVITATION]
    assert world() == before
    assert Invitation.objects.get(pk=invitation.pk).status == Invitation.Status.PENDING
    assert not Seat.objects.filter(table=cast["table"], user=ana).exists()


# -- without a login, another method, without the CSRF token, a NUL byte ------------------------------------------


def every_post(cast: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Each POST-only address of the friends and invitation forms, with a form it would act on."""
    pk = cast["invitation"].pk
    return [
        (FOLLOW, {"name": "dani"}),
        (UNFOLLOW, {"name": "beto"}),
        (BLOCK, {"name": "beto"}),
        (UNBLOCK, {"name": "dani"}),
        (PREFERENCE, {"invites_from": "nobody"}),
        (INVITE, {"table": str(cast["table"].pk), "name": "ana"}),
        (accept_url(pk), {}),
        (decline_url(pk), {}),
    ]


def test_every_post_without_a_login_goes_to_the_login_and_changes_nothing(
    cast: dict[str, Any], notices: list[Any]
) -> None:
    notices.clear()
    before = world()
    for url, form in every_post(cast):
        for headers in ({}, HTMX):
            response = Client().post(url, form, headers=headers)
            assert response.status_code == 302, url
            assert response["Location"].startswith("/accounts/login/?next="), url
    assert world() == before and notices == []


def test_every_post_only_address_refuses_other_methods(cast: dict[str, Any], notices: list[Any]) -> None:
    notices.clear()
    before = world()
    client = signed_in(cast["carla"])
    for url, form in every_post(cast):
        assert client.get(url, form).status_code == 405, url
        for method in (client.put, client.patch, client.delete):
            assert method(url).status_code == 405, (url, method)
    assert world() == before and notices == []


def test_every_post_without_the_csrf_token_is_refused_and_changes_nothing(
    cast: dict[str, Any], notices: list[Any]
) -> None:
    notices.clear()
    strict = signed_in(cast["carla"], enforce_csrf_checks=True)
    before = world()
    for url, form in every_post(cast):
        for headers in ({}, HTMX):
            assert strict.post(url, form, headers=headers).status_code == 403, url
        assert strict.post(url, {**form, "csrfmiddlewaretoken": "x" * 64}).status_code == 403, url  # a made-up one
    assert world() == before and notices == []
    # the same client with the page's own token is let through: the 403s were the token's
    page = strict.get("/amigos/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert token is not None
    response = strict.post(FOLLOW, {"name": "dani", "csrfmiddlewaretoken": token.group(1)})
    assert said(response) == ["Ahora sigues a dani."]


def test_a_nul_byte_anywhere_in_a_form_is_refused_before_any_view(cast: dict[str, Any], notices: list[Any]) -> None:
    notices.clear()
    client = signed_in(cast["carla"], raise_request_exception=False)
    before = world()
    for url, form in every_post(cast):
        for field in ("name", "table", "invites_from", "next", "follower\x00"):
            forged = {**form, field: "beto\x00" if field != "follower\x00" else "1"}
            response = client.post(url, forged)
            assert (response.status_code, response.content.decode()) == (400, BAD_BYTES), (url, field)
    assert world() == before and notices == []


# -- names nobody has ---------------------------------------------------------------------------------------


STRANGE_NAMES = [
    "\x01beto",  # a control character the form may hold (only a NUL is refused before the view)
    "beto\u200b",  # a zero-width space after the name
    "b\u0435to",  # a Cyrillic «е»: a look-alike of beto
    "\u202eotteb",  # a right-to-left override
    "x" * 10_000,
    "beto; DROP TABLE accounts_follow",
    "%00",
    "../beto",
]


@pytest.mark.parametrize("name", STRANGE_NAMES)
def test_a_name_nobody_has_is_refused_by_every_form_and_changes_nothing(
    cast: dict[str, Any], notices: list[Any], name: str
) -> None:
    notices.clear()
    carla = cast["carla"]
    own = actions.do_create_private_table(carla, 4, 0, True)
    client = signed_in(carla)
    before = world()
    for url in FRIEND_FORMS:
        assert said(client.post(url, {"name": name})) == [UNKNOWN_PLAYER], url
        assert flash_text(client.post(url, {"name": name}, headers=HTMX)) == UNKNOWN_PLAYER, url
    assert said(client.post(INVITE, {"table": own.pk, "name": name})) == [UNKNOWN_PLAYER]
    assert flash_text(client.post(INVITE, {"name": name}, headers=HTMX)) == UNKNOWN_PLAYER
    assert world() == before and notices == []


def test_a_name_sent_twice_acts_on_one_person_only(cast: dict[str, Any]) -> None:
    carla = cast["carla"]
    emma = person("emma")
    response = signed_in(carla).post(FOLLOW, {"name": ["ana", "emma"]})
    assert said(response) == ["Ahora sigues a emma."]  # (the form's last value, as Django reads it)
    assert set(Follow.objects.filter(follower=carla).values_list("followee_id", flat=True)) == {
        cast["beto"].pk,
        emma.pk,
    }


# -- «Invitar» to a table one may not invite to -----------------------------------------------------------------


def a_table(kind: str, host: Any) -> tuple[str, str]:
    """(the posted ``table``, the refusal) for a table ``host`` may not invite to."""
    if kind == "someone_elses":
        other = actions.do_create_private_table(person("otra"), 4, 0, True)
        return str(other.pk), UNKNOWN_TABLE
    if kind == "a_guests":  # seated at it by its code, but not its host
        other = actions.do_create_private_table(person("otra"), 4, 0, True)
        actions.do_take_seat(other.pk, host, code=other.code)
        return str(other.pk), "Solo quien ha creado la mesa puede invitar a ella."
    if kind == "public":
        public = actions.do_create_table(host, 4)
        return str(public.pk), "Solo se invita a una mesa privada: a una pública puede sentarse cualquiera."
    if kind == "started":
        started = actions.do_create_private_table(host, 4, 0, True)
        actions.do_start(started.pk, host)
        return str(started.pk), "Esta partida ya ha empezado."
    if kind == "finished":
        finished = actions.do_create_private_table(host, 3, 0, True)
        actions.do_start(finished.pk, host)
        assert play_to_the_end(finished.pk).status == Table.Status.FINISHED
        return str(finished.pk), "Esta partida ya ha terminado o está cancelada."
    if kind == "cancelled":
        cancelled = actions.do_create_private_table(host, 4, 0, True)
        actions.do_cancel(cancelled.pk, host)
        return str(cancelled.pk), "Esta partida ya ha terminado o está cancelada."
    if kind == "left":  # the host stood up, which calls a private table off
        left = actions.do_create_private_table(host, 4, 0, True)
        actions.do_leave_seat(left.pk, host)
        return str(left.pk), "Esta partida ya ha terminado o está cancelada."
    return kind, UNKNOWN_TABLE  # an id as sent


TABLES = [
    "someone_elses",
    "a_guests",
    "public",
    "started",
    "finished",
    "cancelled",
    "left",
    "999999",
    "abc",
    "-1",
    "0",
    "1.5",
    "1e3",
    "0x10",
    " 7",
    "٣",  # an Arabic-Indic digit: a digit to Python, not a row's number
    "9223372036854775808",  # one past PostgreSQL's bigint
    "99999999999999999999999999999999",
    "9" * 5000,
]


@pytest.mark.parametrize("kind", TABLES)
def test_an_invitation_to_a_table_one_may_not_invite_to_is_refused(
    kind: str, settings: Any, notices: list[Any]
) -> None:
    settings.POCHA_BOT_DELAY = 0
    host = person("anfitriona")
    person("invitada")
    table, refusal = a_table(kind, host)
    notices.clear()
    before = world()
    client = signed_in(host)
    assert said(client.post(INVITE, {"table": table, "name": "invitada"})) == [refusal]
    htmx = client.post(INVITE, {"table": table, "name": "invitada"}, headers=HTMX)
    assert htmx.status_code == 200 and htmx["HX-Reswap"] == "none"
    assert flash_text(htmx) == refusal
    assert 'class="flash shown"' in htmx.content.decode()  # an error, not ``ok``
    assert world() == before and notices == []
    assert not Invitation.objects.exists()


# -- «Unirme» and «No, gracias» to an invitation that cannot be answered -------------------------------------


@pytest.mark.parametrize(
    ("state", "refusal"),
    [
        ("accepted", "Ya aceptaste esa invitación."),
        ("declined", "Ya rechazaste esa invitación."),
        ("expired_by_start", "Esa invitación ha caducado: la partida ha empezado o se ha cancelado."),
        ("expired_by_cancel", "Esa invitación ha caducado: la partida ha empezado o se ha cancelado."),
        ("unknown", UNKNOWN_INVITATION),
    ],
)
@pytest.mark.parametrize("answer", ["accept", "decline"])
def test_an_invitation_that_cannot_be_answered_is_refused_through_the_form(
    cast: dict[str, Any], notices: list[Any], state: str, refusal: str, answer: str
) -> None:
    carla, bea, table, invitation = cast["carla"], cast["bea"], cast["table"], cast["invitation"]
    pk: int = invitation.pk
    if state == "accepted":
        invitations.do_accept(pk, carla)
    elif state == "declined":
        invitations.do_decline(pk, carla)
    elif state == "expired_by_start":
        actions.do_start(table.pk, bea)
    elif state == "expired_by_cancel":
        actions.do_cancel(table.pk, bea)
    else:
        pk = Invitation.objects.order_by("-pk").values_list("pk", flat=True)[0] + 1000
    notices.clear()
    before = world()
    url = accept_url(pk) if answer == "accept" else decline_url(pk)
    client = signed_in(carla)
    response = client.post(url, HTTP_REFERER="http://testserver/amigos/")
    assert (response.status_code, response["Location"]) == (302, "http://testserver/amigos/")
    assert said(response) == [refusal]
    htmx = client.post(url, headers=HTMX)
    assert htmx.status_code == 204 and htmx["HX-Redirect"] == "/invitaciones/"
    assert world() == before and notices == []
    assert ledger.balance(carla.pk) == (ledger.WELCOME_CHIPS - 100 if state == "accepted" else ledger.WELCOME_CHIPS)


@pytest.mark.parametrize("raw", ["0", "-1", "abc", "01", "9" * 19, "9" * 40])
def test_an_invitation_address_with_no_rows_number_is_not_found(cast: dict[str, Any], raw: str) -> None:
    before = world()
    client = signed_in(cast["carla"], raise_request_exception=False)
    for url in (accept_url(raw), decline_url(raw)):
        assert client.post(url).status_code == 404, url
    assert world() == before


# -- floods ----------------------------------------------------------------------------------------------


def test_following_and_unfollowing_one_person_over_and_over_is_a_flood_too(settings: Any, notices: list[Any]) -> None:
    """Each follow counts, even of someone followed a moment ago (the window's clock stands still in the suite:
    ``conftest.fresh_rate_limits``)."""
    settings.POCHA_FOLLOW_LIMIT = 3
    fran, emma = person("fran"), person("emma")
    client = signed_in(fran)
    for _ in range(3):
        assert said(client.post(FOLLOW, {"name": "emma"})) == ["Ahora sigues a emma."]
        assert said(client.post(UNFOLLOW, {"name": "emma"})) == ["Has dejado de seguir a emma."]
    notices.clear()
    before = world()
    assert said(client.post(FOLLOW, {"name": "emma"})) == [TOO_MANY]
    assert flash_text(client.post(BLOCK, {"name": "emma"}, headers=HTMX)) == TOO_MANY
    assert world() == before and notices == []
    assert not Follow.objects.filter(follower=fran, followee=emma).exists()
    assert not Block.objects.filter(blocker=fran).exists()


def test_refused_invitations_past_the_limit_write_nothing_through_either_form(
    settings: Any, notices: list[Any]
) -> None:
    settings.POCHA_INVITE_LIMIT = 2
    host = person("anfitriona")
    guests = [person(f"invitado{i}") for i in range(4)]
    table = actions.do_create_private_table(host, 4, 0, True)
    client = signed_in(host)
    for guest in guests[:2]:
        assert said(client.post(INVITE, {"table": table.pk, "name": guest.get_username()})) == [
            f"Invitación enviada a {guest.get_username()}."
        ]
    notices.clear()
    before = world()
    too_many = "Demasiadas invitaciones seguidas: espera un poco antes de invitar a más gente."
    assert said(client.post(INVITE, {"name": "invitado2"})) == [too_many]  # (from «Amigos»: the table it hosts)
    assert flash_text(client.post(INVITE, {"table": table.pk, "name": "invitado3"}, headers=HTMX)) == too_many
    assert world() == before and notices == []
    assert set(Invitation.objects.values_list("recipient_id", flat=True)) == {guests[0].pk, guests[1].pk}
