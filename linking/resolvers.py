"""Metadata for identifiers from Crossref and OpenAlex, over their REST APIs with one HTTP
client (httpx), fetched politely: a ``mailto``, a rate limit, timeouts, and retries with
backoff on 429 and 5xx that honour ``Retry-After`` (the policy tenacity's). No database
here; ``kbx.entities.resolve`` caches. Whatever goes wrong on the wire ends as
ServiceOffline, ServiceNotFound or ServiceFailed (kbx.errors), and every answer is checked
to have the types kbx reads (msgspec) before it is returned, so nothing odd gets cached.
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

import httpx
import msgspec
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt

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


def _retry_after(value: str | None) -> float | None:
    """The seconds a ``Retry-After`` asks for (a number or an HTTP date); None when it is
    missing, negative or unreadable (the backoff then), since a server's odd header must not
    stop the run."""
    try:
        wait = float(value or "")
    except ValueError:
        try:
            wait = max(parsedate_to_datetime(value or "").timestamp() - time.time(), 0.0)
        except (TypeError, ValueError, OverflowError):
            return None
    return None if math.isnan(wait) or wait < 0 else wait


class _Again(Exception):
    """A fault worth another try: why, and the wait a ``Retry-After`` asked (None: the
    backoff)."""

    def __init__(self, why: str, wait: float | None = None):
        super().__init__(why)
        self.why, self.wait = why, wait


def _read(response: httpx.Response, s: Settings) -> object:
    """The decoded JSON of an answer; ``_Again`` for a status worth retrying,
    ServiceNotFound or ServiceFailed for the rest."""
    code = response.status_code
    if code == 404:
        raise ServiceNotFound()
    if code == 429 or code >= 500:
        wait = _retry_after(response.headers.get("retry-after"))
        if wait is not None and wait > s.max_wait:  # sooner would not honour it: next run
            raise ServiceFailed(
                f"HTTP {code}, Retry-After {wait:.0f} s is over max_wait {s.max_wait:g} s"
            )
        raise _Again(f"HTTP {code}", wait)
    if code >= 300:
        moved = response.headers.get("location") if code < 400 else None
        raise ServiceFailed(f"HTTP {code}", location=moved)
    try:
        return json.loads(response.content)
    except ValueError as e:  # UnicodeDecodeError among them
        raise ServiceFailed(f"malformed JSON ({_short(e, 80)})") from None


@functools.cache
def _tls() -> ssl.SSLContext:
    """httpx's default TLS context, made once per process: loading the CA bundle is most of
    a client's start (50-70 ms of CPU), and a context serves any number of clients."""
    return httpx.create_ssl_context()


class Polite:
    """One HTTP client and one pace for every request to either service, and the retry
    policy: ``retries`` more tries after the first, waiting what ``Retry-After`` asks or
    the backoff, doubled each time."""

    def __init__(self, settings: Settings, sleep: Callable[[float], None] = time.sleep):
        self.settings, self.sleep = settings, sleep
        self._last = 0.0
        self.retried = 0
        self._http: httpx.Client | None = None

    @property
    def http(self) -> httpx.Client:
        """The client, opened on first use: no redirect followed (a moved DOI is followed
        by its caller), the mailto where each service reads it (Crossref's User-Agent,
        OpenAlex's From)."""
        if self._http is None:
            mailto = self.settings.mailto
            agent = f"kbx/0.1 (mailto:{mailto})" if mailto else "kbx/0.1"
            headers = {"User-Agent": agent} | ({"From": mailto} if mailto else {})
            self._http = httpx.Client(timeout=self.settings.timeout, headers=headers, verify=_tls())
        return self._http

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None

    def _pace(self) -> None:
        wait = self._last + 1.0 / self.settings.rate - time.monotonic()
        if wait > 0:
            self.sleep(wait)
        self._last = time.monotonic()

    def _try(self, fn: Callable[[], T]) -> T:
        """One paced try; a transport fault sorted: worth a retry (``_Again``), offline,
        or a failure."""
        self._pace()
        try:
            return fn()
        except httpx.TimeoutException:  # a slow connect too: worth a retry, not offline
            raise _Again(f"timed out after {self.settings.timeout:g} s") from None
        except httpx.ConnectError as e:  # refused, no route, no DNS: offline
            raise ServiceOffline(_short(e)) from None
        except httpx.TransportError as e:  # broken once made (a reset, a short body)
            raise _Again(f"connection broken ({_short(e, 80)})") from None
        except httpx.HTTPError as e:  # a body that cannot be decoded, and the like
            why = f"{type(e).__name__}: {_short(e, 80)}"
            raise ServiceFailed(f"unexpected answer ({why})") from None

    def call(self, fn: Callable[[], T]) -> T:
        """``fn()`` under the pace and the retry policy."""
        s = self.settings

        def wait(state) -> float:
            again = state.outcome.exception()
            return s.backoff * 2 ** (state.attempt_number - 1) if again.wait is None else again.wait

        def counted(state) -> None:
            self.retried += 1

        try:
            return Retrying(
                stop=stop_after_attempt(s.retries + 1),
                wait=wait,
                retry=retry_if_exception_type(_Again),
                sleep=self.sleep,
                before_sleep=counted,
                reraise=True,
            )(self._try, fn)
        except _Again as e:
            raise ServiceFailed(f"{e.why}, after {s.retries + 1} tries") from None

    def get(self, url: str, params: dict | None = None) -> object:
        """The JSON answer at ``url``, politely."""
        return self.call(lambda: _read(self.http.get(url, params=params), self.settings))


# The answers' types, as kbx reads them: other fields are free, and null fits any field
# (both services leave empty fields so). A field of another type fails the answer.
Text = str | list[str | None] | None  # Crossref gives titles and venues as lists
DATES = ("issued", "published-print", "published-online", "created")  # of a Crossref work


class _DateParts(msgspec.Struct):
    date_parts: list[list[int | None] | None] | None = msgspec.field(
        default=None, name="date-parts"
    )


class _CrossrefAuthor(msgspec.Struct):
    given: Text = None
    family: Text = None
    name: Text = None
    ORCID: Text = None  # noqa: N815 - Crossref's name


class CrossrefWork(msgspec.Struct):
    DOI: str  # noqa: N815 - Crossref's name
    title: Text = None
    container_title: Text = msgspec.field(default=None, name="container-title")
    score: float | None = None
    author: list[_CrossrefAuthor | None] | None = None
    issued: _DateParts | None = None
    published_print: _DateParts | None = msgspec.field(default=None, name="published-print")
    published_online: _DateParts | None = msgspec.field(default=None, name="published-online")
    created: _DateParts | None = None


class _Name(msgspec.Struct):
    display_name: str | None = None
    orcid: str | None = None


class _Authorship(msgspec.Struct):
    author: _Name | None = None


class _Location(msgspec.Struct):
    source: _Name | None = None


class OpenAlexWork(msgspec.Struct):
    id: str
    title: str | None = None
    publication_year: int | None = None
    primary_location: _Location | None = None
    authorships: list[_Authorship | None] | None = None


class OpenAlexAuthor(msgspec.Struct):
    id: str
    display_name: str | None = None


def checked(answer: object, kind: type[msgspec.Struct]) -> dict:
    """``answer`` if the fields kbx reads have the types it reads them as (``kind``); else
    ServiceFailed, so an odd answer is asked again, never cached."""
    key = kind.__struct_fields__[0]
    if not isinstance(answer, dict) or not isinstance(answer.get(key), str):
        raise ServiceFailed(f"unexpected answer: not an object with a {key}")
    try:
        msgspec.convert(answer, kind)
    except msgspec.ValidationError as e:
        where = str(e).partition(" - at `$")[2].rstrip("`").lstrip(".") or "the answer"
        raise ServiceFailed(f"unexpected answer: {where} is of the wrong type") from None
    return dict(answer)


def _message(answer: object) -> object:
    """The ``message`` of a Crossref answer."""
    return answer.get("message") if isinstance(answer, dict) else None


class Crossref:
    """Works by DOI, and the best matches of a reference string."""

    def __init__(self, settings: Settings, polite: Polite):
        self.base, self.polite = settings.crossref_url.rstrip("/"), polite

    def close(self) -> None:
        self.polite.close()

    def work(self, doi: str, hops: int = 3) -> dict:
        """The work's record; a DOI the API redirects (an alias) is followed, a few hops."""
        try:
            answer = self.polite.get(f"{self.base}/works/{quote(doi, safe='/')}")
        except ServiceFailed as e:
            moved = _moved(e.location)
            if moved is None:
                raise
            if not hops:
                raise ServiceFailed("too many redirects") from None
            return self.work(moved, hops - 1)
        return checked(_message(answer), CrossrefWork)

    def bibliographic(self, reference: str, rows: int = 3) -> list[dict]:
        """Candidate works for a reference string, best first, with Crossref's scores."""
        query = {"query.bibliographic": reference[:1000], "rows": rows}
        items = _message(self.polite.get(f"{self.base}/works", params=query))
        items = items.get("items") if isinstance(items, dict) else None
        if not isinstance(items, list):
            raise ServiceFailed("unexpected answer: no list of items")
        return [checked(item, CrossrefWork) for item in items]


def _moved(location: str | None) -> str | None:
    """The DOI a redirect from the works endpoint points to."""
    path = urlparse(location or "").path
    return unquote(path.split("/works/", 1)[1]) if "/works/" in path else None


class OpenAlex:
    """Works by DOI and authors by ORCID."""

    def __init__(self, settings: Settings, polite: Polite):
        self.base, self.polite = settings.openalex_url.rstrip("/"), polite
        self.params = {"mailto": settings.mailto} if settings.mailto else None

    def close(self) -> None:
        self.polite.close()

    def _get(self, kind: str, key: str) -> object:
        return self.polite.get(f"{self.base}/{kind}/{key}", params=self.params)

    def work(self, doi: str) -> dict:
        answer = self._get("works", f"https://doi.org/{quote(doi, safe='/')}")
        return checked(answer, OpenAlexWork)

    def author(self, orcid: str) -> dict:
        return checked(self._get("authors", f"https://orcid.org/{orcid}"), OpenAlexAuthor)
