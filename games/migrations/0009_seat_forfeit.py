from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0008_presence"),
    ]

    operations = [
        migrations.AddField(
            model_name="seat",
            name="forfeit",
            field=models.CharField(
                blank=True,
                choices=[("", "no"), ("left", "abandonó"), ("bot", "jugó el bot")],
                default="",
                max_length=5,
                verbose_name="renuncia",
            ),
        ),
        migrations.AddField(
            model_name="round",
            name="trump_by_bot",
            field=models.BooleanField(default=False, verbose_name="triunfo elegido por el bot"),
        ),
    ]
