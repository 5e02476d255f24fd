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


def test_gist_for_a_one_database_operation_facing_a_set_in_the_librarys_words():
    error = AmbiguousDatabaseError.needs_one(["a", "b"])
    assert str(error) == (
        "lancedb.databases names a, b; this works on a single database: "
        "name one (DatabaseScope.resolve with database_name, or database_path)"
    )
    assert "--db-name" not in str(error)


def test_the_haiku_rag_cli_words_the_same_error_with_its_flags():
    from haiku.rag.cli._hints import error_text

    assert error_text(AmbiguousDatabaseError.needs_one(["a", "b"])) == (
        "lancedb.databases names a, b; this works on a single database: "
        "pass --db-name NAME, or --db PATH"
    )


def test_gist_for_a_read_at_a_tag_facing_a_set_names_the_operation_as_the_caller_gave_it():
    assert "--at reads a single database" in str(AmbiguousDatabaseError.needs_one(["a", "b"], operation="--at"))


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
    assert str(error) == "database 'papers' does not exist; create it by opening it with create=True"
    assert error.database == "papers"


def test_each_cli_words_the_missing_database_remedy_as_its_command():
    from haiku.ingester.cli_hints import error_text as ingester_text
    from haiku.rag.cli._hints import error_text as rag_text

    error = SourceUnavailableError.missing("papers")
    expected = "database 'papers' does not exist; create it with `haiku-rag --db-name papers init`"
    assert rag_text(error) == expected and ingester_text(error) == expected


def test_a_hint_survives_pickling_so_a_worker_s_error_is_worded_in_the_parent():
    from haiku.rag.cli._hints import error_text

    copy = pickle.loads(pickle.dumps(SourceUnavailableError.missing("papers")))
    assert error_text(copy).endswith("`haiku-rag --db-name papers init`")


def test_an_error_without_a_hint_the_cli_knows_keeps_core_s_words():
    from haiku.rag.cli._hints import error_text

    error = HaikuError.hinted("it broke", errors.Hint("unknown-action", "fix it"))
    assert error_text(error) == str(error) == "it broke; fix it"
    assert error_text(OSError("disk full")) == "disk full"


@pytest.mark.parametrize(
    ("category", "members"),
    [
        (errors.ConfigError, ["InvalidConfigError", "MissingEnvVarError", "ConfigMismatchError",
                              "ConverterUnavailableError"]),
        (errors.DatabaseError, ["SourceUnavailableError", "UnknownDatabaseError", "AmbiguousDatabaseError",
                                "MigrationRequiredError", "ReadOnlyError", "DatabaseLockedError", "TagError",
                                "UnknownTableError"]),
        (errors.QueryError, ["EmptyQueryError", "QueryTooLongError", "LimitTooLargeError", "InvalidFilterError",
                             "ImageQueryError", "NotFoundError", "PictureNotFoundError", "NoPageLayoutError",
                             "AmbiguousCitationError", "ConversionError"]),
    ],
    ids=lambda v: v.__name__ if isinstance(v, type) else "",
)
def test_every_core_error_sits_in_one_of_three_categories(category, members):
    assert issubclass(category, HaikuError)
    for name in members:
        assert issubclass(getattr(errors, name), category), name


def test_every_exported_error_type_is_in_exactly_one_category():
    categories = (errors.ConfigError, errors.DatabaseError, errors.QueryError)
    exported = [getattr(errors, name) for name in errors.__all__]
    types = [t for t in exported if isinstance(t, type) and issubclass(t, HaikuError) and t is not HaikuError]
    leaves = [t for t in types if t not in categories]
    assert leaves and all(sum(issubclass(t, c) for c in categories) == 1 for t in leaves)
    assert {"EmptyQueryError", "InvalidFilterError"} <= set(errors.__all__)


def test_the_tree_in_the_module_docstring_names_every_exported_error():
    exported = {n for n in errors.__all__ if n.endswith("Error")}
    assert exported <= set(errors.__doc__.replace("│", " ").replace("├──", " ").replace("└──", " ").split())


def test_the_embedders_error_is_a_config_error_and_the_ingesters_conversion_error_is_core_s():
    from haiku.core.embedders import EmbeddingError
    from haiku.ingester.errors import ConversionError, PermanentJobError

    assert issubclass(EmbeddingError, errors.ConfigError)
    assert issubclass(ConversionError, errors.ConversionError) and issubclass(ConversionError, PermanentJobError)


def test_no_core_module_tells_a_python_caller_a_cli_flag():
    from pathlib import Path

    core = Path(errors.__file__).parent
    said = [
        f"{path.relative_to(core)}:{number}"
        for path in sorted(core.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if any(flag in line for flag in ("--db-name", "haiku-rag init", "--force", "haiku-rag migrate"))
    ]
    assert said == []


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
