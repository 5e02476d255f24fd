"""The error types and the message gists every package shares (docs/design.md)."""

from __future__ import annotations

import pickle

import pytest

from haiku.core import errors
from haiku.core.errors import (
    AmbiguousCitationError,
    AmbiguousDatabaseError,
    ConfigMismatchError,
    DatabaseLockedError,
    HaikuError,
    InvalidConfigError,
    MigrationRequiredError,
    MissingEnvVarError,
    ReadOnlyError,
    SourceUnavailableError,
    TagError,
    UnknownDatabaseError,
)

SPEC_BASES = [
    (SourceUnavailableError, Exception),
    (UnknownDatabaseError, KeyError),
    (AmbiguousDatabaseError, Exception),
    (ConfigMismatchError, Exception),
    (AmbiguousCitationError, Exception),
    (MigrationRequiredError, Exception),
    (ReadOnlyError, Exception),
    (TagError, ValueError),
    (DatabaseLockedError, Exception),
    (MissingEnvVarError, ValueError),
]


@pytest.mark.parametrize(("error_type", "base"), SPEC_BASES, ids=lambda v: v.__name__)
def test_each_error_has_the_base_the_spec_gives_it(error_type: type, base: type):
    assert issubclass(error_type, base)


@pytest.mark.parametrize(
    "error_type", [t for t, _ in SPEC_BASES] + [InvalidConfigError], ids=lambda v: v.__name__
)
def test_every_error_is_a_haiku_error(error_type: type):
    assert issubclass(error_type, HaikuError)


def test_every_error_is_exported():
    assert {t.__name__ for t, _ in SPEC_BASES} <= set(errors.__all__)


def test_unknown_database_error_str_is_the_plain_sentence_without_keyerror_quotes():
    error = UnknownDatabaseError("unknown database 'nope'; the databases are a, b", names=["nope"])
    assert str(error) == "unknown database 'nope'; the databases are a, b"
    assert str(KeyError("x")) == "'x'"  # what it would be otherwise


def test_unknown_database_error_is_caught_as_keyerror():
    with pytest.raises(KeyError):
        raise UnknownDatabaseError("unknown database 'x'")


def test_missing_env_var_error_names_the_variable():
    error = MissingEnvVarError("API_TOKEN", "qa.model.api_key")
    assert "API_TOKEN" in str(error)
    assert "qa.model.api_key" in str(error)
    assert error.var == "API_TOKEN"


def test_cli_gist_for_a_command_facing_a_set():
    error = AmbiguousDatabaseError.cli_needs_one(["a", "b"])
    assert str(error) == (
        "lancedb.databases names a, b; this command works on a single database: "
        "pass --db-name NAME, or --db PATH"
    )


def test_cli_gist_for_at_facing_a_set():
    assert "--at reads a single database" in str(AmbiguousDatabaseError.cli_needs_one(["a", "b"], at=True))


def test_client_gist_for_an_operation_on_a_set():
    assert str(AmbiguousDatabaseError.client_needs_one("vacuum", ["a", "b"])) == (
        "vacuum works on one database, and this client covers a, b; select one with clients_for([name])"
    )


def test_client_gist_for_an_unknown_name():
    error = UnknownDatabaseError.on_client(["x", "x"], ["a", "b"])
    assert str(error) == "unknown database(s) x; this client covers a, b"
    assert error.names == ("x",)


def test_ambiguous_citation_gist_names_the_id_and_the_databases():
    assert str(AmbiguousCitationError.shared("c1", ["a", "b"])) == (
        "chunk id c1 names a chunk in more than one database (a, b); "
        "a citation records the id alone and cannot say which"
    )


def test_repeat_citation_gist_says_it_was_already_cited():
    assert str(AmbiguousCitationError.already_cited("c1", ["a"], "b")) == (
        "chunk id c1 from database b was already cited from another database (a) in this conversation; "
        "a citation records the id alone and cannot say which"
    )


def test_missing_database_gist_names_it_and_the_remedy():
    error = SourceUnavailableError.missing("papers")
    assert str(error) == (
        "database 'papers' does not exist; create it with `haiku-rag --db-name papers init`"
    )
    assert error.database == "papers"


def test_unopenable_database_gist_carries_only_the_exception_type_name():
    cause = OSError("permission denied: /secret/path/papers.lancedb")
    error = SourceUnavailableError.unopenable("papers", cause)
    assert str(error) == "database 'papers' could not be opened: OSError"
    assert "/secret" not in str(error)


def test_names_list_renders_names_in_order_and_the_unnamed_database():
    assert errors.names_list(["b", "a"]) == "b, a"
    assert errors.names_list([None]) == "(unnamed)"
    assert errors.names_list([]) == "none"


@pytest.mark.parametrize(
    "error",
    [
        UnknownDatabaseError("unknown database 'x'", names=["x"]),
        SourceUnavailableError("database 'a' does not exist", database="a"),
        DatabaseLockedError("database 'a' is locked", database="a"),
        MissingEnvVarError("TOKEN", "qa.model.api_key"),
        TagError("Tag 'x' does not exist"),
        ConfigMismatchError("databases differ"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_errors_survive_pickling_with_message_and_attributes(error: Exception):
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    assert copy.__dict__ == error.__dict__


class _KeywordOnlyError(HaikuError):
    """A subclass defined anywhere, with a keyword-only argument and no pickling code of its own."""

    def __init__(self, message: str, *, where: str) -> None:
        super().__init__(message)
        self.where = where


def test_any_haiku_error_with_keyword_only_arguments_survives_pickling():
    error = _KeywordOnlyError("it broke", where="worker")
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), str(copy), copy.where) == (_KeywordOnlyError, "it broke", "worker")
