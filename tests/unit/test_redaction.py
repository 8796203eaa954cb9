"""Secrets are masked in every text that may reach a log or a screen."""

from __future__ import annotations

import json
import logging
import secrets

import pytest

from lobby_display.redaction import MASK, RedactingFilter, redact, register_secret


class TestShapes:
    def test_key_in_a_query(self) -> None:
        url = "https://d.example/v1/queues?queuesId=Q1,Q2&key=abc123XYZ&page=2"
        assert redact(url) == f"https://d.example/v1/queues?queuesId=Q1,Q2&key={MASK}&page=2"

    def test_key_first_in_a_query(self) -> None:
        assert redact("GET /v1/places/P1?key=abc123XYZ") == f"GET /v1/places/P1?key={MASK}"

    def test_bearer_token(self) -> None:
        text = "Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"
        assert redact(text) == f"Authorization: Bearer {MASK}"

    @pytest.mark.parametrize("name", ["apiKey", "api_key", "private_key", "jwtToken", "token"])
    def test_json_fields(self, name: str) -> None:
        assert redact(f'{{"{name}": "s3cr3tvalue", "other": 1}}') == (
            f'{{"{name}": "{MASK}", "other": 1}}'
        )

    def test_private_key_block(self) -> None:
        pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAKC\n-----END RSA PRIVATE KEY-----"
        cleaned = redact(f"key file: {pem} end")
        assert "MIIEow" not in cleaned and "IBAAKC" not in cleaned
        assert cleaned.endswith("end")

    def test_service_account_file_content(self) -> None:
        pem = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADAN\nBgkqhkiG9w0B\n-----END PRIVATE KEY-----\n"
        for text in (json.dumps({"private_key": pem}), repr({"private_key": pem})):
            cleaned = redact(text)
            assert "MIIEvQIBADAN" not in cleaned and "BgkqhkiG9w0B" not in cleaned

    def test_ordinary_text_is_left_alone(self) -> None:
        text = "GET /v1/queues/tickets/currents?queuesId=Q1&page=2 answered HTTP 200"
        assert redact(text) == text


class TestKnownSecrets:
    def test_a_registered_secret_is_masked_anywhere(self) -> None:
        key = f"key-{secrets.token_hex(8)}"
        register_secret(key)
        assert redact(f"the service said: unknown key {key}.") == (
            f"the service said: unknown key {MASK}."
        )

    def test_short_values_are_not_registered(self) -> None:
        register_secret("abc")
        assert redact("abc abcabc") == "abc abcabc"


class TestLogFilter:
    def logger(self, caplog: pytest.LogCaptureFixture, name: str) -> logging.Logger:
        logger = logging.getLogger(name)
        logger.addFilter(RedactingFilter())
        caplog.set_level(logging.DEBUG, logger=name)
        return logger

    def test_arguments_are_masked(self, caplog: pytest.LogCaptureFixture) -> None:
        logger = self.logger(caplog, "test.redaction.args")
        logger.info('HTTP Request: %s %s "%s"', "GET", "http://h/v1/x?key=k3y-value", "200 OK")
        assert caplog.messages == [f'HTTP Request: GET http://h/v1/x?key={MASK} "200 OK"']

    def test_exception_text_is_masked(self, caplog: pytest.LogCaptureFixture) -> None:
        logger = self.logger(caplog, "test.redaction.exc")
        try:
            raise RuntimeError("failed: http://h/v1/x?key=k3y-value")
        except RuntimeError:
            logger.exception("request failed")
        assert "k3y-value" not in caplog.text
        assert f"?key={MASK}" in caplog.text
        assert "RuntimeError" in caplog.text

    def test_records_are_never_dropped(self, caplog: pytest.LogCaptureFixture) -> None:
        logger = self.logger(caplog, "test.redaction.kept")
        logger.warning("plain %d", 5)
        assert caplog.messages == ["plain 5"]
