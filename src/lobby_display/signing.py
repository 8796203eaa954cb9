"""Signing a developer token (RS256) with the service account's key, in a program of its own.

The kiosk runs `python -m lobby_display.signing` (the PEM and the claims as JSON on standard
input, the token on standard output) so that it never loads cryptography itself (why:
docs/architecture.md); imported, it signs in-process. Nothing else is written anywhere.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey

#: Why a PEM text is not a usable key; the program writes one of these on standard error and
#: exits with KEY_PROBLEM.
ENCRYPTED: Final = "encrypted"
NOT_A_KEY: Final = "not-a-key"
NOT_RSA: Final = "not-rsa"
#: The program's exit status when the key is not usable (1 is Python's own for a crash).
KEY_PROBLEM: Final = 3


class KeyProblem(Exception):
    """The PEM text holds no usable key; `args[0]` is ENCRYPTED, NOT_A_KEY or NOT_RSA."""


def rsa_key(pem: str) -> RSAPrivateKey:
    """The unencrypted RSA private key of a PEM text; raises `KeyProblem` (quoting no key)."""
    # Imported here: `lobby_display.auth` reads this module's names without loading cryptography.
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey

    try:
        key = serialization.load_pem_private_key(pem.encode("utf-8"), password=None)
    except TypeError:
        raise KeyProblem(ENCRYPTED) from None
    except (ValueError, UnsupportedAlgorithm):
        # The library's message may quote the key's first bytes: do not pass it on.
        raise KeyProblem(NOT_A_KEY) from None
    if not isinstance(key, RSAPrivateKey):
        raise KeyProblem(NOT_RSA)
    return key


def sign(claims: Mapping[str, object], key: RSAPrivateKey) -> str:
    """The JWT of `claims`, signed with `key` (RS256)."""
    import jwt

    return jwt.encode(dict(claims), key, algorithm="RS256")


def main() -> int:
    """Read `{"pem": ..., "claims": {...}}` on standard input, write the token on standard output.

    Exits with KEY_PROBLEM (and the problem on standard error) when the key is not usable, 2
    when the request is not such an object; nothing it writes quotes the input.
    """
    try:
        request = json.load(sys.stdin)
        pem, claims = request["pem"], request["claims"]
        if not (isinstance(pem, str) and isinstance(claims, dict)):
            raise TypeError
    except (ValueError, KeyError, TypeError) as error:
        print(f"unreadable request ({type(error).__name__})", file=sys.stderr)
        return 2
    try:
        token = sign(claims, rsa_key(pem))
    except KeyProblem as problem:
        print(problem.args[0], file=sys.stderr)
        return KEY_PROBLEM
    sys.stdout.write(token)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
