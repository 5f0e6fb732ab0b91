import pytest

from games.models import Round, Table
from games.table import actions

pytestmark = pytest.mark.django_db


def test_moderators_see_tables_and_rounds_in_the_admin(django_user_model, client, settings):
    admin_user = django_user_model.objects.create_superuser(username="mod", password="x-cuarenta-bazas")
    table = actions.do_create_table(admin_user, 3)
    actions.do_start(table.pk, admin_user)
    client.force_login(admin_user)
    assert client.get("/admin/games/table/").status_code == 200
    page = client.get(f"/admin/games/table/{table.pk}/change/")
    assert page.status_code == 200 and "Bot " in page.content.decode()
    round_row = Round.objects.get(table=table, number=1)
    assert client.get(f"/admin/games/round/{round_row.pk}/change/").status_code == 200
    assert Table.objects.get(pk=table.pk).status == Table.Status.PLAYING
