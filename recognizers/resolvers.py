"""Metadata for identifiers from Crossref (through habanero) and OpenAlex (through pyalex),
fetched politely: a ``mailto``, a rate limit, timeouts, and retries with backoff on 429
and 5xx that honour ``Retry-After``. No database here; ``kbx.store.resolve`` caches.

pyalex builds its URLs on a fixed host, so the OpenAlex base URL is applied by a
requests adapter that re-hosts each request (and sets the timeout), not by patching it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from urllib.parse import quote, unquote, urlparse

import httpx2
import requests
from requests.adapters import HTTPAdapter

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
    def load(cls, options: dict | None = None) -> Settings:
        o = dict(options or {})
        return cls(
            crossref_url=os.environ.get("KBX_CROSSREF_URL") or o.get("crossref_url", CROSSREF),
            openalex_url=os.environ.get("KBX_OPENALEX_URL") or o.get("openalex_url", OPENALEX),
            mailto=os.environ.get("KBX_MAILTO") or o.get("mailto"),
            rate=float(o.get("rate", 5.0)),
            timeout=float(o.get("timeout", 10.0)),
            retries=int(o.get("retries", 4)),
            backoff=float(o.get("backoff", 1.0)),
            max_wait=float(o.get("max_wait", 60.0)),
            min_score=float(o.get("min_score", 0.0)),
        )


class Offline(Exception):
    """The service cannot be reached at all: stop, and say so once."""


class NotFound(Exception):
    """The service answered 404: recorded, and not asked again every run."""


class Failed(Exception):
    """An answer could not be had after the retries; the reason says why."""


def _status(e: Exception) -> tuple[int | None, dict]:
    response = getattr(e, "response", None)
    if response is None:
        return None, {}
    return response.status_code, dict(response.headers)


def _retry_after(headers: dict, default: float, cap: float) -> float:
    value = headers.get("retry-after") or headers.get("Retry-After")
    if value:
        try:
            return min(float(value), cap)
        except ValueError:
            try:
                return min(max(parsedate_to_datetime(value).timestamp() - time.time(), 0), cap)
            except (TypeError, ValueError):
                pass
    return min(default, cap)


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

    def call(self, fn: Callable[[], dict]) -> dict:
        s = self.settings
        for attempt in range(s.retries + 1):
            self._pace()
            delay = s.backoff * 2**attempt
            try:
                return fn()
            except (httpx2.TimeoutException, requests.Timeout):  # a slow connect too: retried
                why = f"timed out after {s.timeout:g} s"
            except (httpx2.ConnectError, requests.ConnectionError) as e:
                raise Offline(str(e).splitlines()[0][:200]) from None
            except (httpx2.HTTPStatusError, requests.HTTPError) as e:
                code, headers = _status(e)
                if code == 404:
                    raise NotFound() from None
                if code != 429 and not (code and code >= 500):
                    raise Failed(f"HTTP {code}") from None
                why = f"HTTP {code}"
                delay = _retry_after(headers, delay, s.max_wait)
            except ValueError as e:  # JSONDecodeError is one
                raise Failed(f"malformed JSON ({str(e)[:80]})") from None
            if attempt < s.retries:
                self.retried += 1
                self.sleep(delay)
        raise Failed(f"{why}, after {s.retries + 1} tries")


class Crossref:
    """Works by DOI, and the best matches of a reference string, via habanero."""

    def __init__(self, settings: Settings, polite: Polite):
        from habanero import Crossref as Client

        self.client = Client(
            base_url=settings.crossref_url, mailto=settings.mailto, timeout=settings.timeout
        )
        self.base, self.timeout, self.polite = settings.crossref_url, settings.timeout, polite

    def work(self, doi: str, hops: int = 3) -> dict:
        """The work's record; a DOI the API redirects (an alias) is followed."""
        try:
            return self.polite.call(lambda: self.client.works(ids=doi))["message"]
        except Failed as e:
            moved = _moved(e)
            if moved and hops:
                return self.work(moved, hops - 1)
            raise

    def bibliographic(self, reference: str, rows: int = 3) -> list[dict]:
        """Candidate works for a reference string, best first, with Crossref's scores."""
        answer = self.polite.call(
            lambda: self.client.works(query_bibliographic=reference[:1000], limit=rows)
        )
        return answer["message"]["items"]


def _moved(e: Failed) -> str | None:
    """The DOI a 301/302 from the works endpoint points to."""
    cause = e.__context__
    response = getattr(cause, "response", None)
    if response is None or response.status_code not in (301, 302, 303, 307, 308):
        return None
    path = urlparse(response.headers.get("location", "")).path
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
        self.pyalex, self.polite = pyalex, polite

    def _get(self, kind, key: str) -> dict:
        entity = kind()
        entity.params = key
        return dict(self.polite.call(lambda: entity._get_from_url(entity.url, self.session)))

    def work(self, doi: str) -> dict:
        return self._get(self.pyalex.Works, f"https://doi.org/{quote(doi, safe='/')}")

    def author(self, orcid: str) -> dict:
        return self._get(self.pyalex.Authors, f"https://orcid.org/{orcid}")
