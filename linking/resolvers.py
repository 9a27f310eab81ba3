"""Metadata for identifiers from Crossref (through habanero) and OpenAlex (through pyalex),
fetched politely: a ``mailto``, a rate limit, timeouts, and retries with backoff on 429
and 5xx that honour ``Retry-After``. No database here; ``kbx.entities.resolve`` caches.
Whatever goes wrong on the wire ends as ServiceOffline, ServiceNotFound or ServiceFailed
(kbx.errors), and every answer is checked to have the shape kbx reads before it is
returned, so nothing odd gets cached.

pyalex builds its URLs on a fixed host, so the OpenAlex base URL is applied by a
requests adapter that re-hosts each request (and sets the timeout), not by patching it.
"""

from __future__ import annotations

import functools
import json
import math
import os
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TypeVar
from urllib.parse import quote, unquote, urlparse

import httpx2
import requests
from requests.adapters import HTTPAdapter
from urllib3.exceptions import NewConnectionError, ReadTimeoutError

from kbx.config import ResolveConfig
from kbx.errors import ServiceFailed, ServiceNotFound, ServiceOffline

T = TypeVar("T")

CROSSREF = "https://api.crossref.org"
OPENALEX = "https://api.openalex.org"


@dataclass
class Settings:
    """Where and how politely to ask; from the environment and ``[resolve]`` in kbx.toml."""

    crossref_url: str = CROSSREF
    openalex_url: str = OPENALEX
    mailto: str | None = None
    rate: float = 5.0  # requests per second, both services together (Crossref allows ~25)
    timeout: float = 10.0
    retries: int = 4
    backoff: float = 1.0  # seconds, doubled each retry
    max_wait: float = 60.0  # the longest Retry-After honoured
    min_score: float = 0.0  # a reference match needs this Crossref score (and must agree)

    @classmethod
    def load(cls, options: ResolveConfig | None = None) -> Settings:
        """From ``[resolve]`` (checked by kbx.config), the environment's URLs and mailto first."""
        o = options or ResolveConfig()
        return cls(
            crossref_url=os.environ.get("KBX_CROSSREF_URL") or o.crossref_url or CROSSREF,
            openalex_url=os.environ.get("KBX_OPENALEX_URL") or o.openalex_url or OPENALEX,
            mailto=os.environ.get("KBX_MAILTO") or o.mailto,
            rate=o.rate,
            timeout=o.timeout,
            retries=o.retries,
            backoff=o.backoff,
            max_wait=o.max_wait,
            min_score=o.min_score,
        )


def _short(e: BaseException, n: int = 200) -> str:
    return (str(e).splitlines() or [type(e).__name__])[0][:n]


def _unreachable(e: Exception) -> str | None:
    """Why no connection could be made (refused, no route, no DNS): offline, not one bad
    answer. A connection that breaks once made (a reset, a short body) is worth a retry."""
    if isinstance(e, httpx2.ConnectError):
        return _short(e)
    reason = getattr(e.args[0] if e.args else None, "reason", None)  # requests' MaxRetryError's
    if isinstance(e, requests.ConnectionError) and isinstance(reason, NewConnectionError):
        return _short(reason).split("): ", 1)[-1]  # without "HTTPConnection(host=…, port=…)"
    return None


def _retry_after(value: str | None, default: float) -> float:
    """The seconds a ``Retry-After`` asks for (a number or an HTTP date); the backoff when it
    is missing, negative or unreadable, since a server's odd header must not stop the run."""
    try:
        wait = float(value or "")
    except ValueError:
        try:
            wait = max(parsedate_to_datetime(value or "").timestamp() - time.time(), 0.0)
        except (TypeError, ValueError, OverflowError):
            return default
    return default if math.isnan(wait) or wait < 0 else wait


TIMEOUTS = (httpx2.TimeoutException, requests.Timeout)
BROKEN = (httpx2.TransportError, requests.ConnectionError, requests.exceptions.ChunkedEncodingError)


def _fault(e: Exception, s: Settings, backoff: float) -> tuple[str, float]:
    """Why one try failed and how long to wait before the next, for a fault worth retrying;
    raises ServiceOffline, ServiceNotFound or ServiceFailed for the rest. Any exception from
    the client libraries is one of these, so one odd answer never ends the run."""
    from habanero.exceptions import RequestError

    while isinstance(e, RuntimeError) and isinstance(e.__cause__, Exception):
        e = e.__cause__  # habanero wraps transport errors in RuntimeError
    if isinstance(e.__context__, httpx2.HTTPStatusError):
        e = e.__context__  # habanero, reading an error's body, raised its own or failed
    arg = e.args[0] if e.args else None  # requests' ConnectionError wraps urllib3's error
    if isinstance(e, TIMEOUTS) or isinstance(arg, ReadTimeoutError):  # a slow connect too
        return f"timed out after {s.timeout:g} s", backoff
    offline = _unreachable(e)
    if offline:
        raise ServiceOffline(offline)
    if isinstance(e, (httpx2.TooManyRedirects, requests.TooManyRedirects)):
        raise ServiceFailed("too many redirects")
    if isinstance(e, BROKEN):
        return f"connection broken ({_short(e, 80)})", backoff
    response = getattr(e, "response", None)
    code = getattr(response, "status_code", None)
    if isinstance(e, RequestError) and code is None:  # habanero: a 2xx body that is not JSON
        raise ServiceFailed(f"not JSON ({_short(e, 80)})")
    if isinstance(code, int):
        headers = response.headers  # case-insensitive in both libraries
        if code == 404:
            raise ServiceNotFound()
        if code != 429 and code < 500:
            moved = headers.get("location") if 300 <= code < 400 else None
            raise ServiceFailed(f"HTTP {code}", location=moved)
        wait = _retry_after(headers.get("retry-after"), backoff)
        if wait > s.max_wait:  # retrying sooner would not honour it: next run instead
            raise ServiceFailed(
                f"HTTP {code}, Retry-After {wait:.0f} s is over max_wait {s.max_wait:g} s"
            )
        return f"HTTP {code}", wait
    if isinstance(e, (json.JSONDecodeError, requests.JSONDecodeError)):
        raise ServiceFailed(f"malformed JSON ({_short(e, 80)})")
    raise ServiceFailed(f"unexpected answer ({type(e).__name__}: {_short(e, 80)})")


class Polite:
    """One pace for every request, and the retry policy."""

    def __init__(self, settings: Settings, sleep: Callable[[float], None] = time.sleep):
        self.settings, self.sleep = settings, sleep
        self._last = 0.0
        self.retried = 0

    def _pace(self) -> None:
        wait = self._last + 1.0 / self.settings.rate - time.monotonic()
        if wait > 0:
            self.sleep(wait)
        self._last = time.monotonic()

    def call(self, fn: Callable[[], T]) -> T:
        s = self.settings
        for attempt in range(s.retries + 1):
            self._pace()
            try:
                return fn()
            except Exception as e:  # sorted by _fault: whatever it does not know is ServiceFailed
                why, delay = _fault(e, s, s.backoff * 2**attempt)
            if attempt < s.retries:
                self.retried += 1
                self.sleep(delay)
        raise ServiceFailed(f"{why}, after {s.retries + 1} tries")


Shape = type | tuple | list | dict
DATES = ("issued", "published-print", "published-online", "created")  # of a Crossref work
TEXT = (str, [str])  # Crossref gives titles and venues as lists
CROSSREF_WORK: dict = {
    "DOI": str,
    "title": TEXT,
    "container-title": TEXT,
    "score": (int, float),
    "author": [{"given": TEXT, "family": TEXT, "name": TEXT, "ORCID": TEXT}],
} | {date: {"date-parts": [[int]]} for date in DATES}
OPENALEX_WORK = {
    "id": str,
    "title": str,
    "publication_year": int,
    "primary_location": {"source": {"display_name": str}},
    "authorships": [{"author": {"display_name": str, "orcid": str}}],
}
OPENALEX_AUTHOR = {"id": str, "display_name": str}


def _misfit(v: object, shape: Shape, at: str = "") -> str | None:
    """Where decoded JSON ``v`` first departs from ``shape``, None if it fits: a type, a
    tuple of alternatives, ``[shape]`` a list of them, ``{key: shape}`` an object (other keys
    are free). Null fits anything: both services leave empty fields so."""
    here = at or "the answer"
    if v is None:
        return None
    if isinstance(shape, tuple):
        return None if any(_misfit(v, s) is None for s in shape) else here
    if isinstance(shape, list):
        if not isinstance(v, list):
            return here
        return next((m for i, x in enumerate(v) if (m := _misfit(x, shape[0], f"{at}[{i}]"))), None)
    if isinstance(shape, dict):
        if not isinstance(v, dict):
            return here
        keys = ((f"{at}.{k}" if at else k, v.get(k), s) for k, s in shape.items())
        return next((m for path, x, s in keys if (m := _misfit(x, s, path))), None)
    return None if isinstance(v, shape) and not isinstance(v, bool) else here


def checked(answer: object, shape: dict, key: str) -> dict:
    """``answer`` if it is an object with a string ``key`` whose fields kbx reads have the
    types it reads them as; else ServiceFailed, so an odd answer is asked again, never cached."""
    if not isinstance(answer, dict) or not isinstance(answer.get(key), str):
        raise ServiceFailed(f"unexpected answer: not an object with a {key}")
    where = _misfit(answer, shape)
    if where:
        raise ServiceFailed(f"unexpected answer: {where} is of the wrong type")
    return dict(answer)


def _message(answer: object) -> object:
    """The ``message`` of a Crossref answer."""
    return answer.get("message") if isinstance(answer, dict) else None


@functools.cache
def _tls() -> ssl.SSLContext:
    """httpx2's default TLS context, made once per process: loading the CA bundle is most
    of a client's start (50-70 ms of CPU), and a context serves any number of clients."""
    return httpx2.create_ssl_context()


class _Pooled:
    """What habanero calls as its HTTP module (``httpx2`` in its request modules), ``get``
    going through one client: habanero makes a client per request, which loads the CA
    bundle (tens of ms of CPU) and opens a new connection and TLS session each time. The
    client has ``httpx2.get``'s defaults (no redirects followed); the rest is httpx2's."""

    def __init__(self, client: httpx2.Client):
        self._client = client

    def get(self, url: str, **kwargs) -> httpx2.Response:
        return self._client.get(url, **kwargs)

    def __getattr__(self, name: str) -> object:
        return getattr(httpx2, name)


class Crossref:
    """Works by DOI, and the best matches of a reference string, via habanero, on one
    pooled connection (``close`` it when done)."""

    def __init__(self, settings: Settings, polite: Polite):
        from habanero import Crossref as Client

        self.client = Client(
            base_url=settings.crossref_url, mailto=settings.mailto, timeout=settings.timeout
        )
        self.http = httpx2.Client(verify=_tls())
        self.base, self.timeout, self.polite = settings.crossref_url, settings.timeout, polite

    def _works(self, **query) -> object:
        from habanero import request, request_class  # its two ways of asking

        plain, pooled = request.httpx2, _Pooled(self.http)
        request.httpx2 = request_class.httpx2 = pooled
        try:
            return self.client.works(**query)
        finally:
            request.httpx2 = request_class.httpx2 = plain

    def close(self) -> None:
        self.http.close()

    def work(self, doi: str, hops: int = 3) -> dict:
        """The work's record; a DOI the API redirects (an alias) is followed, a few hops."""
        try:
            answer = self.polite.call(lambda: self._works(ids=doi))
        except ServiceFailed as e:
            moved = _moved(e.location)
            if moved is None:
                raise
            if not hops:
                raise ServiceFailed("too many redirects") from None
            return self.work(moved, hops - 1)
        return checked(_message(answer), CROSSREF_WORK, "DOI")

    def bibliographic(self, reference: str, rows: int = 3) -> list[dict]:
        """Candidate works for a reference string, best first, with Crossref's scores."""
        answer = self.polite.call(
            lambda: self._works(query_bibliographic=reference[:1000], limit=rows)
        )
        items = _message(answer)
        items = items.get("items") if isinstance(items, dict) else None
        if not isinstance(items, list):
            raise ServiceFailed("unexpected answer: no list of items")
        return [checked(item, CROSSREF_WORK, "DOI") for item in items]


def _moved(location: str | None) -> str | None:
    """The DOI a redirect from the works endpoint points to."""
    path = urlparse(location or "").path
    return unquote(path.split("/works/", 1)[1]) if "/works/" in path else None


class _Rehost(HTTPAdapter):
    """Send pyalex's requests to the configured OpenAlex base URL, with a timeout."""

    def __init__(self, base: str, timeout: float):
        super().__init__()
        self.base, self.timeout = base.rstrip("/"), timeout

    def send(self, request, **kwargs):
        if request.url.startswith(OPENALEX):
            request.url = self.base + request.url[len(OPENALEX) :]
        kwargs["timeout"] = self.timeout
        return super().send(request, **kwargs)


class OpenAlex:
    """Works by DOI and authors by ORCID, via pyalex."""

    def __init__(self, settings: Settings, polite: Polite):
        import pyalex

        pyalex.config.email = settings.mailto
        pyalex.config.max_retries = 0  # retries are Polite's
        self.session = requests.Session()
        adapter = _Rehost(settings.openalex_url, settings.timeout)
        self.session.mount("https://", adapter)
        self.session.mount("http://", adapter)
        self.session.max_redirects = 5  # a redirect loop is a failure soon, not after 30
        # an error status raises before pyalex reads the body (it reads a 400's as JSON)
        self.session.hooks["response"].append(lambda r, *args, **kw: r.raise_for_status())
        self.pyalex, self.polite = pyalex, polite

    def close(self) -> None:
        self.session.close()

    def _get(self, kind, key: str) -> object:
        entity = kind()
        entity.params = key
        return self.polite.call(lambda: entity._get_from_url(entity.url, self.session))

    def work(self, doi: str) -> dict:
        answer = self._get(self.pyalex.Works, f"https://doi.org/{quote(doi, safe='/')}")
        return checked(answer, OPENALEX_WORK, "id")

    def author(self, orcid: str) -> dict:
        return checked(self._get(self.pyalex.Authors, f"https://orcid.org/{orcid}"),
                       OPENALEX_AUTHOR, "id")  # fmt: skip
