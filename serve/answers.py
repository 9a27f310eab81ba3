"""Answers over HTTP: a command's JSON, or one error object as ``--json`` prints it
(``error``, ``code``, ``message``, ``hint``) with the HTTP status that fits. No traceback
ever reaches a client: a bug is logged here and answered as a 500 saying so."""

from __future__ import annotations

import logging

from starlette.responses import Response

from kbx import api
from kbx.errors import INTERNAL_ERROR, IndexBusy, KbxError, OutsideRoot

log = logging.getLogger("kbx.serve")

REFUSED = 2  # the exit code the CLI gives a bad argument, for a request refused here
_STATUS = {2: 400, 3: 404, 4: 503, 5: 503, 6: 503}  # exit code -> HTTP status
_HINTS = {
    4: "another process is writing the index; try again in a moment",
    5: "the index is from another kbx version or not an index; run `kbx status` on it",
}


def answer(obj: dict, status: int = 200, headers: dict | None = None) -> Response:
    return Response(api.json_text(obj), status, headers, media_type="application/json")


def error_object(error: str, code: int, message: str, hint: str | None = None) -> dict:
    return {"error": error, "code": code, "message": message, "hint": hint}


def refusal(status: int, error: str, message: str, hint: str | None = None, **headers) -> Response:
    """A request the server will not serve, said in one error object."""
    return answer(error_object(error, REFUSED, message, hint), status, headers or None)


def of_error(e: KbxError) -> dict:
    """The ``--json`` error object of a named error."""
    return error_object(type(e).__name__, e.exit_code, str(e), _HINTS.get(e.exit_code))


def failure(e: Exception) -> Response:
    """A named error as its status (a path outside the root is 403, a busy index 503 with
    Retry-After); anything else is a bug, logged with its traceback and answered as 500."""
    if isinstance(e, KbxError):
        status = 403 if isinstance(e, OutsideRoot) else _STATUS.get(e.exit_code, 422)
        retry = {"Retry-After": "1"} if isinstance(e, IndexBusy) else None
        return answer(of_error(e), status, retry)
    log.exception("kbx hit a bug serving a request")
    return answer(bug(e), 500)


def bug(e: Exception) -> dict:
    return error_object(
        "InternalError",
        INTERNAL_ERROR,
        f"kbx hit a bug ({type(e).__name__}); the index is unchanged",
        "the server's log has the traceback; please report it",
    )
