"""The lobby: "Jugar ya" seats people together, bots fill a quick table after the wait, open tables."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from games.models import Seat, Table
from games.table import actions

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(django_user_model):
    return [django_user_model.objects.create_user(username=f"p{i}", password="x-cuarenta-bazas") for i in range(6)]


def test_quick_play_seats_people_at_the_same_waiting_table(people, settings):
    settings.POCHA_QUICK_WAIT = 20
    first = actions.do_quick_play(people[0], 4)
    second = actions.do_quick_play(people[1], 4)
    other_size = actions.do_quick_play(people[2], 3)
    assert first.pk == second.pk != other_size.pk
    table = Table.objects.get(pk=first.pk)
    assert table.status == Table.Status.WAITING and table.is_quick and table.size == 4
    assert sorted(Seat.objects.filter(table=table).values_list("position", flat=True)) == [0, 1]
    # the wait is the configured one, and it is what the clock will act on
    assert timedelta(seconds=19) < table.fill_at - table.created_at <= timedelta(seconds=21)
    assert table.due_at == table.fill_at
    # asking again brings you back to your own table, without a second seat
    assert actions.do_quick_play(people[0], 4).pk == first.pk
    assert Seat.objects.filter(table=table, user=people[0]).count() == 1


def test_bots_fill_the_empty_seats_when_the_wait_is_over(people):
    table = actions.do_quick_play(people[0], 5)
    table = Table.objects.get(pk=table.pk)
    assert actions.do_due(table.pk, table.seq) is None  # not yet due: nothing happens
    assert Table.objects.get(pk=table.pk).status == Table.Status.WAITING
    Table.objects.filter(pk=table.pk).update(due_at=timezone.now() - timedelta(seconds=1))
    assert actions.do_due(table.pk, table.seq) is not None
    table = Table.objects.get(pk=table.pk)
    assert table.status == Table.Status.PLAYING and table.round_number == 1
    seats = list(Seat.objects.filter(table=table))
    assert len(seats) == 5 and sum(s.is_bot for s in seats) == 4
    assert len({s.name for s in seats}) == 5
    # a second, late run of the same step does nothing
    assert actions.do_due(table.pk, table.seq - 1) is None


def test_a_table_full_of_people_starts_at_once(people):
    table = actions.do_quick_play(people[0], 3)
    actions.do_quick_play(people[1], 3)
    actions.do_quick_play(people[2], 3)
    table = Table.objects.get(pk=table.pk)
    assert table.status == Table.Status.PLAYING
    assert not Seat.objects.filter(table=table, is_bot=True).exists()
    # a fourth person gets a new table
    assert actions.do_quick_play(people[3], 3).pk != table.pk


def test_leaving_before_the_start_and_the_last_one_out_cancels(people):
    table = actions.do_quick_play(people[0], 4)
    actions.do_quick_play(people[1], 4)
    actions.do_leave_seat(table.pk, people[1])
    assert Seat.objects.filter(table=table).count() == 1
    actions.do_leave_seat(table.pk, people[0])
    table = Table.objects.get(pk=table.pk)
    assert table.status == Table.Status.CANCELLED and table.due_at is None
    with pytest.raises(actions.ActionError) as refused:
        actions.do_take_seat(table.pk, people[2])
    assert refused.value.code == "not_waiting"


def test_http_lobby_quick_play_open_tables_and_sitting_down(people, client):
    client.force_login(people[0])
    response = client.post("/jugar/", {"size": "6"})
    table = Table.objects.get(seats__user=people[0])
    assert response.status_code == 302 and response["Location"] == f"/mesa/{table.pk}/"
    page = client.get(f"/mesa/{table.pk}/")
    assert page.status_code == 200 and f'ws-connect="/ws/mesa/{table.pk}/"' in page.content.decode()
    client.force_login(people[1])
    listing = client.get("/mesas/abiertas/").content.decode()
    assert f"/mesa/{table.pk}/sentarse/" in listing
    response = client.post(f"/mesa/{table.pk}/sentarse/")
    assert response.status_code == 302
    assert Seat.objects.filter(table=table, user=people[1]).exists()
    home = client.get("/").content.decode()
    assert "Jugar ya" in home and f"/mesa/{table.pk}/" in home


def test_the_table_page_speaks_english_too(people, client, settings):
    settings.POCHA_BOT_DELAY = 0
    client.force_login(people[0])
    client.post("/jugar/", {"size": "4"})
    table = Table.objects.get(seats__user=people[0])
    actions.do_start(table.pk, people[0])
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    english = client.get(f"/mesa/{table.pk}/").content.decode()
    assert "Round 1 of 19" in english and "Players" in english
    assert " of " in english  # card names: "3 of cups"
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "es"
    spanish = client.get(f"/mesa/{table.pk}/").content.decode()
    assert "Ronda 1 de 19" in spanish and " de " in spanish
