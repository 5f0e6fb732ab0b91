"""Deployment settings from the environment: HTTPS in production passes Django's deployment checks;
plain HTTP (``make run``, a local run with DEBUG off) keeps cookies usable over http://."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from support.server import child_env

from pocha_site.settings import ONE_YEAR, proxy_ssl_header, security_settings

BASE_DIR = Path(__file__).resolve().parent.parent


def production_env(**more: str) -> dict[str, str]:
    return {
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(48),  # 64 characters
        "ALLOWED_HOSTS": "pocha.example",
        "CSRF_TRUSTED_ORIGINS": "https://pocha.example",
        "HTTPS": "true",
        "TRUSTED_PROXIES": "127.0.0.1",  # nginx on the same machine (deploy/systemd/pocha.env.example)
        **more,
    }


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=BASE_DIR, env=child_env(env), capture_output=True, text=True, timeout=120
    )


def loaded_settings(env: dict[str, str]) -> dict:
    names = [
        "SECURE_SSL_REDIRECT",
        "SESSION_COOKIE_SECURE",
        "CSRF_COOKIE_SECURE",
        "LANGUAGE_COOKIE_SECURE",
        "SECURE_HSTS_SECONDS",
        "SECURE_PROXY_SSL_HEADER",
        "CONTENT_SECURITY_POLICY",
        "MIDDLEWARE",
    ]
    script = (
        f"import json; from pocha_site import settings as s; print(json.dumps({{n: getattr(s, n) for n in {names!r}}}))"
    )
    result = run(["-c", script], env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_production_over_https_passes_the_deployment_checks() -> None:
    result = run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], production_env())
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "System check identified no issues" in output, output
    assert "WARNING" not in output and "security.W" not in output, output


def test_https_follows_the_trusted_origins_when_not_said() -> None:
    env = production_env()
    del env["HTTPS"]
    result = run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], env)
    assert result.returncode == 0, result.stdout + result.stderr


def test_production_over_https_sends_secure_cookies_and_hsts() -> None:
    loaded = loaded_settings(production_env(SECURE_PROXY_SSL_HEADER="HTTP_X_FORWARDED_PROTO"))
    assert loaded["SECURE_SSL_REDIRECT"] is True
    assert loaded["SESSION_COOKIE_SECURE"] is True and loaded["CSRF_COOKIE_SECURE"] is True
    assert loaded["LANGUAGE_COOKIE_SECURE"] is True
    assert loaded["SECURE_HSTS_SECONDS"] == ONE_YEAR
    assert loaded["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert "csp.middleware.CSPMiddleware" in loaded["MIDDLEWARE"]


@pytest.mark.parametrize("origins", ["", "http://127.0.0.1:8000"])
def test_plain_http_with_debug_off_keeps_cookies_usable(origins: str) -> None:
    """A local run on http://127.0.0.1 with DEBUG off: no secure cookies (the browser would drop them),
    no redirect to https, no HSTS."""
    env = {
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(48),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "CSRF_TRUSTED_ORIGINS": origins,
    }
    loaded = loaded_settings(env)
    assert loaded["SESSION_COOKIE_SECURE"] is False and loaded["CSRF_COOKIE_SECURE"] is False
    assert loaded["LANGUAGE_COOKIE_SECURE"] is False
    assert loaded["SECURE_SSL_REDIRECT"] is False
    assert loaded["SECURE_HSTS_SECONDS"] == 0
    assert loaded["SECURE_PROXY_SSL_HEADER"] is None


def test_the_content_security_policy_allows_only_the_site_itself() -> None:
    directives = loaded_settings({})["CONTENT_SECURITY_POLICY"]["DIRECTIVES"]
    assert directives["default-src"] == ["'self'"]
    assert directives["script-src"] == ["'self'"] and directives["style-src"] == ["'self'"]
    assert directives["connect-src"] == ["'self'"]
    assert directives["frame-ancestors"] == ["'none'"] and directives["object-src"] == ["'none'"]
    assert directives["base-uri"] == ["'self'"] and directives["form-action"] == ["'self'"]
    assert not any("unsafe" in source for sources in directives.values() for source in sources)


# -- The helpers, from a dict environment -------------------------------------------------------


def test_security_settings_without_environment_are_for_plain_http() -> None:
    assert security_settings({}) == {
        "SECURE_SSL_REDIRECT": False,
        "SESSION_COOKIE_SECURE": False,
        "CSRF_COOKIE_SECURE": False,
        "LANGUAGE_COOKIE_SECURE": False,
        "SECURE_HSTS_SECONDS": 0,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": False,
        "SECURE_HSTS_PRELOAD": False,
        "SECURE_PROXY_SSL_HEADER": None,
    }


def test_https_can_be_tuned_or_turned_off() -> None:
    tuned = security_settings(
        {
            "HTTPS": "true",
            "SECURE_HSTS_SECONDS": "3600",
            "SECURE_HSTS_PRELOAD": "false",
            "SECURE_HSTS_INCLUDE_SUBDOMAINS": "no",
            "SECURE_SSL_REDIRECT": "false",
        }
    )
    assert tuned["SESSION_COOKIE_SECURE"] is True and tuned["SECURE_SSL_REDIRECT"] is False
    assert (tuned["SECURE_HSTS_SECONDS"], tuned["SECURE_HSTS_PRELOAD"], tuned["SECURE_HSTS_INCLUDE_SUBDOMAINS"]) == (
        3600,
        False,
        False,
    )
    # HTTPS=false wins over https trusted origins; mixed origins do not turn it on
    assert (
        security_settings({"HTTPS": "false", "CSRF_TRUSTED_ORIGINS": "https://pocha.example"})["SESSION_COOKIE_SECURE"]
        is False
    )
    assert (
        security_settings({"CSRF_TRUSTED_ORIGINS": "https://pocha.example,http://127.0.0.1:8000"})[
            "SESSION_COOKIE_SECURE"
        ]
        is False
    )
    assert security_settings({"CSRF_TRUSTED_ORIGINS": "https://pocha.example"})["SESSION_COOKIE_SECURE"] is True


def test_the_proxy_header_is_read_in_either_spelling() -> None:
    assert proxy_ssl_header("") is None
    assert proxy_ssl_header("HTTP_X_FORWARDED_PROTO") == ("HTTP_X_FORWARDED_PROTO", "https")
    assert proxy_ssl_header("X-Forwarded-Proto") == ("HTTP_X_FORWARDED_PROTO", "https")
    assert proxy_ssl_header("X-Forwarded-Ssl=on") == ("HTTP_X_FORWARDED_SSL", "on")


# -- The Content-Security-Policy on the pages, and nothing inline for it to block ----------------


@pytest.mark.django_db
def test_pages_and_the_admin_carry_the_policy(client) -> None:
    for path in ["/", "/accounts/login/", "/clasificacion/", "/admin/login/"]:
        response = client.get(path)
        assert response.status_code == 200, path
        policy = response["Content-Security-Policy"]
        assert "default-src 'self'" in policy and "script-src 'self'" in policy, (path, policy)
        assert "frame-ancestors 'none'" in policy and "unsafe" not in policy, (path, policy)
    html = client.get("/").content.decode()
    assert '"includeIndicatorStyles": false' in html and '"allowEval": false' in html


TEMPLATES = sorted((BASE_DIR / "templates").rglob("*.html"))


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda path: str(path.relative_to(BASE_DIR / "templates")))
def test_no_template_has_inline_script_style_or_handlers(template: Path) -> None:
    """The policy blocks inline scripts, style="" attributes, <style> elements, on…="" handlers and
    htmx's hx-on (it would need eval): the templates have none of them."""
    import re

    text = template.read_text()
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", text), "an inline <script>"
    assert not re.search(r"<style\b", text), "a <style> element"
    assert not re.search(r"\sstyle\s*=", text), "a style attribute"
    assert not re.search(r"\son[a-z]+\s*=", text), "an inline event handler"
    assert not re.search(r"\s(hx|data-hx)-on\b", text), "hx-on (needs eval)"
    assert not re.search(r"""\shx-(vals|vars)\s*=\s*['"]\s*js:""", text), "a js: value (needs eval)"
