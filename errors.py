"""Named errors: the CLI turns each into one clear line and a non-zero exit."""


class KbxError(Exception):
    """Base of every error kbx reports to a user."""


class ExtractError(KbxError):
    """A file could not be read or parsed; it is recorded with this reason and skipped."""


class IndexNotFound(KbxError):
    """No index was found from the current directory upward and none was given."""


class IndexBusy(KbxError):
    """Another process holds the index for writing longer than we were willing to wait."""


class SchemaError(KbxError):
    """The index file has a schema this version of kbx cannot read or migrate."""


class BadArgument(KbxError):
    """An argument is malformed or names something that does not exist."""


class OutsideRoot(BadArgument):
    """A path lies outside the indexed root."""
