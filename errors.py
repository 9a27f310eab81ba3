"""Named errors: the CLI turns each into one clear line and the exit code it names.

Exit codes (also in the README and `kbx --help`): 0 done; 1 a kbx error not listed below;
2 a bad argument; 3 no index found; 4 the index is busy (try again); 5 the index file is
from another kbx version or not an index; 6 the index folder cannot be written; 70 kbx hit
a bug (the index is unchanged: every write is a transaction); 130 interrupted.
"""


class KbxError(Exception):
    """Base of every error kbx reports to a user."""

    exit_code = 1


class ExtractError(KbxError):
    """A file could not be read or parsed; it is recorded with this reason and skipped."""


class NotItsFormat(ExtractError):
    """A file named like a format kbx guesses by name alone (``python3.9`` for a manual
    page) that is not one: skipped, not failed."""


class BadArgument(KbxError):
    """An argument is malformed or names something that does not exist."""

    exit_code = 2


class OutsideRoot(BadArgument):
    """A path lies outside the indexed root."""


class IndexNotFound(KbxError):
    """No index was found from the current directory upward and none was given."""

    exit_code = 3


class IndexBusy(KbxError):
    """Another process holds the index for writing longer than we were willing to wait."""

    exit_code = 4


class SchemaError(KbxError):
    """The index file has a schema this version of kbx cannot read or migrate."""

    exit_code = 5


class IndexUnwritable(KbxError):
    """The folder that holds (or would hold) the index cannot be written."""

    exit_code = 6


class ModelMissing(KbxError):
    """A configured model is not installed; the message says what to install."""


class GlinerUnavailable(KbxError):
    """The configured GLiNER model cannot be read or run; the message says what to do."""


class EngineUnavailable(KbxError):
    """The configured engine cannot run the pass (its package is missing, its scheduler
    unreachable, its workers unable to load a recognizer); the message says what to install
    or check. Raised before anything is written, or between two committed batches."""


class Off(KbxError):
    """Raised by a recognizer's constructor when it is not set up for this index (no model
    configured): it is left out quietly, unlike one that fails."""


class GlinerOff(Off):
    """No GLiNER model configured: GLiNER is off for this index, which is the default."""


class Superseded(KbxError):
    """Another process ran a newer version of this recognizer meanwhile (a gazetteer edit
    during an index run): this pass's remaining batches must not overwrite its runs."""


class ServiceError(KbxError):
    """A lookup service (Crossref, OpenAlex) gave no usable answer; never fails indexing."""


class ServiceOffline(ServiceError):
    """The service cannot be reached at all: stop asking it, and say so once."""


class ServiceNotFound(ServiceError):
    """The service answered 404: recorded, and not asked again every run."""


class ServiceFailed(ServiceError):
    """No usable answer: a fault that outlasted the retries, or an answer of a shape kbx
    does not read. Recorded, and asked again next run; ``location`` is where a redirect
    pointed."""

    def __init__(self, why: str, location: str | None = None):
        super().__init__(why)
        self.location = location


class OverBudget(BaseException):
    """Raised in a worker when a file runs past its time budget. A BaseException, so a
    parser's ``except Exception`` cannot swallow it."""


INTERNAL_ERROR = 70  # EX_SOFTWARE: an unexpected exception, a bug in kbx
INTERRUPTED = 130
