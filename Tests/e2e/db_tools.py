"""Straight to the test database with psql (IDENTITY_DATABASE_URL): to look at what only the store
shows (spent refresh tokens, outbox rows, what is left of a deleted user) and to age a row past
its expiry."""

import os
import subprocess


def literal(text):
    """A SQL string literal (standard_conforming_strings: only quotes need doubling)."""
    assert "\0" not in text, text
    return "'" + text.replace("'", "''") + "'"


def token_hash(refresh_token):
    """The SQL expression of a refresh token's stored hash: SHA-256 of its UTF-8 text."""
    return f"sha256(convert_to({literal(refresh_token)}, 'UTF8'))"


def rows(sql, timeout=30):
    """Runs one statement; returns its rows as lists of column texts ('|'-separated by psql -At,
    so keep '|' out of the selected values). -q: no command tags such as "UPDATE 1"."""
    done = subprocess.run(
        ["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", os.environ["IDENTITY_DATABASE_URL"],
         "-c", sql],
        capture_output=True, text=True, timeout=timeout,
    )
    assert done.returncode == 0, f"psql failed ({done.returncode}) on {sql!r}:\n{done.stderr}"
    return [line.split("|") for line in done.stdout.splitlines()]


def value(sql, timeout=30):
    """The single value of a one-row, one-column query."""
    result = rows(sql, timeout=timeout)
    assert len(result) == 1 and len(result[0]) == 1, f"expected one value from {sql!r}, got {result!r}"
    return result[0][0]


def tables_containing(text):
    """The tables of the database (schema public) with a row whose text form (every column, as
    PostgreSQL prints the row) contains `text` verbatim: where a secret would show if it were
    stored in plaintext."""
    tables = [row[0] for row in rows("select tablename from pg_tables where schemaname = 'public' "
                                     "order by tablename")]
    found = []
    for table in tables:
        hit = value(f'select exists (select 1 from public."{table}" x '
                    f"where strpos(x::text, {literal(text)}) > 0)")
        if hit == "t":
            found.append(table)
    return found
