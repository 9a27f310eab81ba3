"""The web page of ``kbx serve``, for people: search with facets, a document view at the
cited lines, entity pages and the gazetteer form, as routes for ``http.app(routes=...)``.

Server-rendered, so a link to a search works without JavaScript; the script in
``web/page.js`` only adds keys, the entity type-ahead and the gazetteer edits. Every
answer comes from the functions of ``commands.py`` (the same the API and MCP call), so the
page shows what ``--json`` says.

Templates are Jinja2 with autoescape on: documents are hostile input (titles, names,
front matter, text), and one escaping rule for every interpolation is safer than an
``html.escape`` at each of them. The templates, CSS and script are package data in
``web/`` (a folder beside this module, without Python). Pages are sent with a strict
Content-Security-Policy (scripts and styles from this server only, nothing inline), so
even a missed escape could not run a document's script.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote, urlencode

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from kbx import api
from kbx.errors import BadArgument, KbxError
from kbx.serve import commands
from kbx.serve.answers import failure
from kbx.serve.http import gazetteer_edit
from kbx.serve.live import LiveIndex

FILES = Path(__file__).with_name("web")
REPEATED = ("entity", "author", "type", "meta", "quantity")  # repeat: each narrows further
DATE_FROM = ("any", "mentioned", "document")  # kbx search --date-from (it checks them)
LINES_SHOWN = 20000  # lines of a document shown around the cited ones
MORE = 10  # passages a "more" link adds
MENTIONS = 200  # mentions on an entity's page
K_DEFAULT = commands.K_DEFAULT  # passages shown
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",  # the index changes under the page
}
STATIC = {"page.css": "text/css", "page.js": "text/javascript"}

Pairs = list[tuple[str, str]]


def _digest(name: str) -> str:
    return hashlib.sha256((FILES / name).read_bytes()).hexdigest()[:10]


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(FILES),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    versions = {name: _digest(name) for name in STATIC}
    env.globals["static"] = lambda name: f"/static/{name}?v={versions[name]}"
    env.globals["entity_href"] = entity_href
    env.globals["doc_href"] = doc_href
    env.filters["marked"] = marked
    env.filters["short"] = lambda h: (h or "")[:12]
    return env


def href(path: str, pairs: Pairs) -> str:
    return f"{path}?{urlencode(pairs)}" if pairs else path


def entity_href(entity_id: str) -> str:
    return "/entity/" + quote(entity_id, safe=":@/")


def doc_href(path: str, start: int, end: int | None = None, hash: str | None = None) -> str:
    lines = f"{start}-{end}" if end and end != start else str(start)
    pairs = [("path", path), ("lines", lines)] + ([("hash", hash[:12])] if hash else [])
    return f"{href('/doc', pairs)}#L{start}"


def marked(snippet: str) -> list[tuple[str, bool]]:
    """A snippet's ``**match**`` spans as (text, is a match) pieces, to escape one by one."""
    return [(piece, i % 2 == 1) for i, piece in enumerate(snippet.split("**")) if piece]


def _with(state: Pairs, key: str, value: str) -> Pairs:
    if key in REPEATED:
        return state if (key, value) in state else [*state, (key, value)]
    return [(k, v) for k, v in state if k != key] + [(key, value)]


def _without(state: Pairs, key: str, value: str | None = None) -> Pairs:
    return [(k, v) for k, v in state if not (k == key and value in (None, v))]


def _toggle(state: Pairs, key: str, value: str) -> str:
    """A facet's link: narrow to ``value``, or, when it is chosen, widen again."""
    if (key, value) in state:
        return href("/", _without(state, key, value))
    return href("/", _with(state, key, value))


def _state(request: Request) -> Pairs:
    """The query's parameters, blanks dropped (an empty form field means no filter)."""
    seen: Pairs = []
    for k, v in request.query_params.multi_items():
        if v.strip() and (k, v.strip()) not in seen:
            seen.append((k, v.strip()))
    return seen


class Pages:
    """The routes' shared parts: the index, the templates, and the answer of an error."""

    def __init__(self, index: LiveIndex):
        self.index, self.env = index, _environment()
        self.static = {name: (FILES / name).read_bytes() for name in STATIC}

    def html(
        self, template: str, status: int = 200, headers: dict | None = None, **ctx
    ) -> Response:
        ctx = {"q": "", "title": "", **ctx}  # the header's search box, the tab's title
        body = self.env.get_template(template).render(root=str(self.index.root), **ctx)
        return HTMLResponse(body, status, {**HEADERS, **(headers or {})})

    def error(self, e: Exception, template: str = "error.html", **ctx) -> Response:
        """The status and the one error object the API would answer, as a page (a bug is
        logged with its traceback by ``failure`` and shown as a 500 that says so)."""
        answered = failure(e)
        problem = json.loads(answered.body)
        retry = {k: v for k, v in answered.headers.items() if k.lower() == "retry-after"}
        ctx.setdefault("title", problem["error"])
        return self.html(template, answered.status_code, retry, problem=problem, **ctx)

    def route(self, build: Callable[[Request], Response]):
        """An endpoint running ``build`` (blocking: DuckDB) in the thread pool."""

        async def endpoint(request: Request) -> Response:
            try:
                return await run_in_threadpool(build, request)
            except Exception as e:
                try:
                    return self.error(e)
                except Exception:
                    return failure(e)  # a page that cannot be drawn: the API's answer

        return endpoint

    # -- the search page -------------------------------------------------------------

    def search(self, request: Request) -> Response:
        state = _state(request)
        q = next((v for k, v in state if k == "q"), "")
        ctx = {"q": q, "title": q, "result": None, "home": None, "more": None}
        if not q:
            ctx["home"] = self._home()
            return self.html("search.html", **self._form(ctx, state, None))
        given: dict[str, list] = {}
        for k, v in state:
            given.setdefault(k, []).append(v)
        try:
            result = commands.run(
                self.index, "search", given, api.HTTP, "the search page", repeated=True
            )
        except Exception as e:
            return self.error(e, "search.html", **self._form(ctx, state, None))
        ctx["result"] = result
        ctx["more"] = self._more(state, result)
        return self.html("search.html", **self._form(ctx, state, result.get("facets")))

    def _home(self) -> dict:
        """With no query: what the index holds and who it names, to start from."""
        return {
            "status": commands.status(self.index),
            "entities": commands.entities(self.index, limit=30)["entities"],
        }

    def _more(self, state: Pairs, result: dict) -> str | None:
        k = int(next((v for key, v in state if key == "k"), K_DEFAULT))
        if result["total"] <= len(result["hits"]) or k >= commands.K_MAX:
            return None
        return href("/", _with(state, "k", str(min(k + MORE, commands.K_MAX))))

    def _form(self, ctx: dict, state: Pairs, facets: dict | None) -> dict:
        """The controls, the active filters as removable chips, and the facets as links."""
        labels = {
            e["entity_id"]: e["label"]
            for facet in ("entities", "authors")
            for e in (facets or {}).get(facet, {}).get("values", [])
        }
        single = {k: v for k, v in state if k not in REPEATED}
        kept = [(k, v) for k, v in state if k in REPEATED or k == "k"]
        chips = [
            {"key": k, "value": labels.get(v, v) if k in ("entity", "author") else v,
             "href": href("/", _without(state, k, v))}
            for k, v in state
            if k not in ("q", "k")
        ]  # fmt: skip
        types = {t["type"]: t["count"] for t in (facets or {}).get("types", {}).get("values", [])}
        options = sorted({*types, *api.GAZETTEER_TYPES} - {v for k, v in state if k == "type"})
        ctx.update(
            single=single,
            kept=kept,
            chips=chips,
            type_options=[(t, types.get(t)) for t in options],
            date_from=DATE_FROM,
            facets=self._facets(state, facets) if facets else None,
        )
        return ctx

    def _facets(self, state: Pairs, facets: dict) -> dict:
        chosen = {v for k, v in state if k in ("entity", "type")}
        entities = facets["entities"]["values"]
        top = max((e["count"] for e in entities), default=1)
        return {
            "passages": facets["passages"],
            "years": _histogram(state, facets["years"]),
            "first_date": facets["first_date"],
            "last_date": facets["last_date"],
            "entities": [
                e
                | {
                    "on": e["entity_id"] in chosen,
                    "step": _step(e["count"], top),
                    "filter": _toggle(state, "entity", e["entity_id"]),
                }
                for e in entities
            ],
            "entities_other": facets["entities"]["other"],
            "authors": [
                a
                | {
                    "on": ("author", a["entity_id"]) in state,
                    "filter": _toggle(state, "author", a["entity_id"]),
                }
                for a in facets.get("authors", {}).get("values", [])
            ],
            "types": [
                t | {"on": t["type"] in chosen, "filter": _toggle(state, "type", t["type"])}
                for t in facets["types"]["values"]
            ],
            "cited": sorted(facets["cited_years"]["values"], key=lambda y: y["year"]),
            "quantities": [_quantity(state, q) for q in facets["quantities"]["values"]],
        }

    # -- the document view -----------------------------------------------------------

    def doc(self, request: Request) -> Response:
        state = dict(_state(request))
        unknown = sorted(set(state) - {"path", "lines", "hash"})
        if unknown or "path" not in state:
            extra = f", not {', '.join(unknown)}" if unknown else ""
            raise BadArgument(
                f"the document view takes path, lines and hash{extra} "
                "(e.g. /doc?path=notes/a.md&lines=7-9)"
            )
        path = state["path"]
        start, end = _lines(state.get("lines"))
        asked = {"spec": path, "hash": state.get("hash")}
        excerpt = commands.run(self.index, "read", asked, api.HTTP, "the document view")
        n = len(excerpt["lines"])
        if start and start > n:
            raise BadArgument(f"{excerpt['path']} has {n} lines; line {start} does not exist")
        end = min(end or start or 0, n)
        first, last = 1, n
        if n > LINES_SHOWN:  # a very long file: the cited lines and what surrounds them
            first = max(1, (start or 1) - LINES_SHOWN // 2)
            last = min(n, first + LINES_SHOWN - 1)
        lines = [
            (i, excerpt["lines"][i - 1], bool(start) and start <= i <= end)
            for i in range(first, last + 1)
        ]
        return self.html(
            "doc.html",
            title=excerpt["path"],
            excerpt=excerpt,
            cited=state.get("hash"),
            start=start,
            end=end,
            total=n,
            lines=lines,
            cut=(first, last) if (first, last) != (1, n) else None,
            q="",
        )

    # -- entities and the gazetteer --------------------------------------------------

    def entity(self, request: Request) -> Response:
        entity_id = request.path_params["id"]
        try:
            asked = {"id": entity_id, "limit": MENTIONS}
            e = commands.run(self.index, "entity", asked, api.HTTP, "the entity view")
        except BadArgument as missing:
            gone = self._retracted(entity_id)
            if gone is None:
                raise missing from None
            return self.html("retracted.html", 410, title=entity_id, entry=gone)
        return self.html("entity.html", title=e["label"], e=e, limit=MENTIONS)

    def _retracted(self, entry_id: str) -> dict | None:
        """A gazetteer entry retracted since a link to it was made (its log stays)."""
        try:
            entry = api.gazetteer_show(self.index, entry_id)
        except KbxError:
            return None
        return entry if entry["retracted_at"] else None

    def gazetteer(self, request: Request) -> Response:
        entries = api.gazetteer_list(self.index, retracted=True)
        return self.html(
            "gazetteer.html",
            title="Gazetteer",
            types=api.GAZETTEER_TYPES,
            entries=[x for x in entries if not x["retracted_at"]],
            retracted=[x for x in entries if x["retracted_at"]],
            q="",
        )

    async def edit(self, request: Request) -> Response:
        """The form's edit, as JSON (the guard takes no other body, so another site's
        form cannot post one), through the function ``POST /api/gazetteer`` calls; then
        303 to the entity's page. An error is the API's JSON error, which the form shows."""
        try:
            done = await gazetteer_edit(self.index, request, "the gazetteer form")
        except Exception as e:
            return failure(e)
        return RedirectResponse(entity_href(done["entry_ids"][0]), 303)

    async def asset(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in self.static:
            return self.error(BadArgument(f"no file {name!r} here; there are {', '.join(STATIC)}"))
        return Response(
            self.static[name],
            media_type=STATIC[name],
            headers={"Cache-Control": "public, max-age=31536000, immutable",
                     "X-Content-Type-Options": "nosniff"},
        )  # fmt: skip


def _lines(spec: str | None) -> tuple[int | None, int | None]:
    if not spec:
        return None, None
    m = re.fullmatch(r"(\d{1,9})(?:-(\d{1,9}))?", spec)
    if not m or int(m[1]) < 1 or (m[2] and int(m[2]) < int(m[1])):
        raise BadArgument(f"lines is START or START-END counted from 1 (e.g. 7-9), got {spec!r}")
    return int(m[1]), int(m[2] or m[1])


def _quantity(state: Pairs, q: dict) -> dict:
    """A dimension's histogram: each bin labelled by its edges (``1 g–1 kg``, ``< 1 mg``,
    ``≥ 1 t``) and narrowing to its own ``--quantity`` (or widening again when chosen)."""

    def label(b: dict) -> str:
        if b["from"] is None:
            return f"< {b['to']}"
        return f"≥ {b['from']}" if b["to"] is None else f"{b['from']}–{b['to']}"

    bins = [
        b | {"on": ("quantity", b["filter"]) in state, "label": label(b),
             "href": _toggle(state, "quantity", b["filter"])}
        for b in q["bins"]
    ]  # fmt: skip
    return q | {"bins": bins}


def _step(count: int, top: int) -> int:
    """A bar's length in twentieths (CSS classes p0..p20: no inline style under the CSP)."""
    return max(1, round(20 * count / top)) if count else 0


def _histogram(state: Pairs, years: dict) -> list[dict]:
    """Bars by year, the years between the shown ones filled with empty bars when the
    span is short; each bar narrows after/before to its year (both inclusive: that year)."""
    counts = {y["year"]: y["count"] for y in years["values"]}
    if not counts:
        return []
    low, high = min(counts), max(counts)
    span = range(low, high + 1) if high - low < 40 else sorted(counts)
    top = max(counts.values())
    chosen = (dict(state).get("after"), dict(state).get("before"))
    every = -(-len(span) // 8)  # a label on every bar up to 8, then on every few
    bars = []
    for i, y in enumerate(span):
        narrowed = _with(_with(state, "after", str(y)), "before", str(y))
        bars.append(
            {
                "year": y,
                "label": str(y) if i % every == 0 else "",
                "count": counts.get(y, 0),
                "step": _step(counts.get(y, 0), top),
                "href": href("/", narrowed) if y in counts else None,
                "on": chosen == (str(y), str(y)),
            }
        )
    return bars


def page_routes(index: LiveIndex) -> list[BaseRoute]:
    """``/`` (search), ``/doc``, ``/entity/ID``, ``/gazetteer`` (GET the form, POST an
    edit) and ``/static/NAME``: pass them to ``http.app(..., routes=...)``."""
    p = Pages(index)
    return [
        Route("/", p.route(p.search), methods=["GET"]),
        Route("/doc", p.route(p.doc), methods=["GET"]),
        Route("/entity/{id:path}", p.route(p.entity), methods=["GET"]),
        Route("/gazetteer", p.route(p.gazetteer), methods=["GET"]),
        Route("/gazetteer", p.edit, methods=["POST"]),
        Route("/static/{name}", p.asset, methods=["GET"]),
    ]
