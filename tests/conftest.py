"""Shared fixtures for the site tests (the engine's tests live in tests/engine/)."""

import pytest

PASSWORD = "cuarenta-bazas-2025"


@pytest.fixture
def password() -> str:
    return PASSWORD


@pytest.fixture
def player(django_user_model, password):
    return django_user_model.objects.create_user(username="marisa", password=password)
