"""A move rewrites the table's row (its seq, the small state, whose turn, when the next step is due).  On
PostgreSQL such an update is HOT (the new row version goes in the same page and no index is touched) only
if no indexed column changes and the page has room for it; before this, ``due_at`` was indexed and every
move added an entry to each of the table's eight indexes.  So ``table_due_idx`` goes (the sweeper finds due
tables among the live ones by status) and the table's pages are filled to 70 % on insert, leaving room for
a row's next versions (a row is about 2 KB: two rows a page and space for two more)."""

from django.db import migrations

FILLFACTOR = 70


def set_fillfactor(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"ALTER TABLE games_table SET (fillfactor = {FILLFACTOR})")


def reset_fillfactor(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("ALTER TABLE games_table RESET (fillfactor)")


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0016_tournament_no_due_at"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="table",
            name="table_due_idx",
        ),
        migrations.RunPython(set_fillfactor, reset_fillfactor),
    ]
