from django.urls import path

from . import friends_urls, invitation_urls, ops, rules_pages, views

app_name = "games"

urlpatterns = [
    path("jugar/", views.quick_play, name="quick_play"),
    path("mesas/nueva/", views.create_table, name="create_table"),
    path("mesas/privada/", views.create_private_table, name="create_private"),
    path("mesas/codigo/", views.join_by_code, name="join_by_code"),
    path("mesas/abiertas/", views.lobby_tables, name="open_tables"),
    path("mesa/privada/<code:code>/", views.private_link, name="private_link"),
    path("mesa/<id:table_id>/", views.table_page, name="table"),
    path("mesa/<id:table_id>/sentarse/", views.take_seat, name="take_seat"),
    path("mesa/<id:table_id>/revancha/", views.rematch_offer, name="rematch"),
    path("mesa/<id:table_id>/revancha/no/", views.rematch_decline, name="rematch_decline"),
    path("mesa/<id:table_id>/partida.json", views.record_download, name="record"),
    path("mesa/<id:table_id>/repeticion/", views.replay, name="replay"),
    path("mesa/<id:table_id>/analizar/", views.analyse, name="analyse"),
    path("mesa/<id:table_id>/analisis/estado/", views.analysis_status, name="analysis_status"),
    path("mesa/<id:table_id>/jugar-mano/", views.play_again, name="play_again"),
    path("jugador/<name:name>/", views.player_profile, name="player"),
    path("torneos/", views.tournaments, name="tournaments"),
    path("torneos/<id:tournament_id>/", views.tournament, name="tournament"),
    path("torneos/<id:tournament_id>/inscribirse/", views.tournament_register, name="tournament_register"),
    path("torneos/<id:tournament_id>/retirarse/", views.tournament_withdraw, name="tournament_withdraw"),
    path("reglas/", views.rules, name="rules"),
    path("reglas/<key:preset>/", rules_pages.rules_preset, name="rules_preset"),
    path("servidor/eventos.json", ops.hub_stats, name="hub_stats"),
    *friends_urls.urlpatterns,
    *invitation_urls.urlpatterns,
]
