"""Players who signed up before the wallet existed get the same welcome grant as everyone after."""

from django.db import migrations

WELCOME_CHIPS = 5_000


def welcome_existing(apps, schema_editor):
    User = apps.get_model("auth", "User")
    Account = apps.get_model("accounts", "Account")
    Transaction = apps.get_model("accounts", "Transaction")
    Entry = apps.get_model("accounts", "Entry")
    grants, _ = Account.objects.get_or_create(kind="grants", user=None, table=None)
    for user in User.objects.all().order_by("pk"):
        key = f"welcome:{user.pk}"
        if Transaction.objects.filter(key=key).exists():
            continue
        account, _ = Account.objects.get_or_create(kind="user", user_id=user.pk)
        grants.balance -= WELCOME_CHIPS
        account.balance += WELCOME_CHIPS
        grants.save(update_fields=["balance"])
        account.save(update_fields=["balance"])
        record = Transaction.objects.create(kind="welcome", key=key)
        Entry.objects.create(transaction=record, account=grants, amount=-WELCOME_CHIPS, balance_after=grants.balance)
        Entry.objects.create(transaction=record, account=account, amount=WELCOME_CHIPS, balance_after=account.balance)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_chips"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(welcome_existing, migrations.RunPython.noop)]
