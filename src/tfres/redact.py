"""What a record may keep of a command line: secrets masked, text that any JSON reader takes.

    redact_command(["train.py", "--api-key=sk-1", "--password", "hunter3", "pg://u:pw@h/db"])
    # ['train.py', '--api-key=***', '--password', '***', 'pg://u:***@h/db']

Masked: the value of an option whose name has a secret word in it (``--api-key=V``,
``--password V``, ``--token V``, ``--secret V``, ``--auth-token V``...), the value of a
``NAME=VALUE`` argument whose name does (``HF_TOKEN=V`` as given to ``env``), and the password
of a URL (``scheme://user:PASSWORD@host``). Text that is not valid Unicode (the bytes of a file
name that is not UTF-8, which Python hands over as surrogate escapes) becomes ``\\xNN`` escapes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["MASK", "is_secret_option", "redact_argument", "redact_command", "safe_text"]

MASK = "***"

#: a name (option or variable) holding one of these as a word is a secret: ``--api-key``,
#: ``--db-pass``, ``AUTH_COOKIE``
_SECRET_PARTS = frozenset(
    {"key", "pass", "pw", "pwd", "auth", "cookie", "token", "secret", "credential", "credentials"}
)
#: ... and so is one with these anywhere in it: ``--apikey``, ``--hf_token``, ``--db-password``
_SECRET_INFIXES = ("password", "passwd", "passphrase", "secret", "token", "apikey", "credential")

_OPTION = re.compile(r"^(--?[A-Za-z][A-Za-z0-9_.-]*)(=)(.*)$", re.DOTALL)
_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(=)(.*)$", re.DOTALL)
_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^/@\s:]*):[^/@\s]*@")


def is_secret_option(name: str) -> bool:
    """Whether an option or variable name (``--api-key``, ``HF_TOKEN``) suggests a secret."""
    text = name.lstrip("-").lower()
    parts = re.split(r"[-_.]", text)
    joined = "".join(parts)
    return any(p in _SECRET_PARTS for p in parts) or any(w in joined for w in _SECRET_INFIXES)


def safe_text(text: str) -> str:
    """``text`` unchanged when it is valid Unicode, else with each bad byte as ``\\xNN``.

    ``"\\udcff\\udcfe.csv"`` (the bytes ``ff fe`` under Python's surrogateescape) becomes
    ``"\\\\xff\\\\xfe.csv"``: printable, storable in SQLite and readable by any JSON parser.
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that is no escaped byte
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


def _mask_url_passwords(text: str) -> str:
    return _URL_PASSWORD.sub(rf"\1:{MASK}@", text)


def redact_argument(arg: str) -> str:
    """One argument with its secret masked: ``--token=abc`` -> ``--token=***``."""
    for pattern in (_OPTION, _ASSIGNMENT):
        match = pattern.match(arg)
        if match and is_secret_option(match.group(1)):
            return f"{match.group(1)}={MASK}"
    return _mask_url_passwords(arg)


def redact_command(argv: Sequence[str]) -> list[str]:
    """A copy of ``argv`` fit to store: secrets masked (see the module docstring), text safe.

    The value after a separate secret option (``--password hunter3``) is masked unless it
    is itself an option (``--password --next``). Applying it twice changes nothing more.
    """
    out: list[str] = []
    mask_next = False
    for raw in argv:
        arg = safe_text(str(raw))
        if mask_next and not arg.startswith("--"):
            out.append(MASK)
            mask_next = False
            continue
        mask_next = False
        if arg.startswith("-") and "=" not in arg and is_secret_option(arg):
            mask_next = True
            out.append(arg)
            continue
        out.append(redact_argument(arg))
    return out
