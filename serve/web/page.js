// kbx serve's page: keys, the entity type-ahead, the cited lines in view, and the
// gazetteer forms (sent as JSON, the only body the server takes). The page works without
// it, edits aside: every view is rendered by the server.
"use strict";

const typing = (el) => el.closest && el.closest("input, textarea, select, [contenteditable]");

document.addEventListener("keydown", (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.key === "Escape" && typing(e.target)) {
    e.target.blur();
    return;
  }
  if (typing(e.target)) return;
  if (e.key === "/") {
    const box = document.getElementById("q");
    if (box) {
      e.preventDefault();
      box.focus();
      box.select();
    }
  } else if (e.key === "j" || e.key === "k") {
    const links = [...document.querySelectorAll(".hits .cite .loc, .exact .loc")];
    if (!links.length) return;
    const at = links.indexOf(document.activeElement);
    const next = e.key === "j" ? Math.min(at + 1, links.length - 1) : Math.max(at - 1, 0);
    links[next].focus();
    links[next].closest("li").scrollIntoView({ block: "nearest" });
  }
});

// Empty filters stay out of the address, so a shared link says only what was chosen.
const search = document.getElementById("search");
if (search) {
  search.addEventListener("submit", () => {
    for (const el of search.elements) {
      if (!el.name) continue;
      const blank = el.value.trim() === "" || el.value === el.dataset.default;
      if (blank && el.name !== "q") el.disabled = true;
    }
  });
  window.addEventListener("pageshow", () => {
    for (const el of search.elements) el.disabled = false;
  });
}

// Entity type-ahead over names and aliases, from the same entities command as the API.
const entity = document.getElementById("entity-input");
const names = document.getElementById("entity-names");
if (entity && names) {
  let timer = 0;
  let asked = "";
  const suggest = async () => {
    const q = entity.value.trim();
    if (!q || q === asked) return;
    asked = q;
    const r = await fetch("/api/entities?" + new URLSearchParams({ q, limit: "12" }));
    if (!r.ok || entity.value.trim() !== q) return;
    const found = (await r.json()).entities;
    const lower = q.toLowerCase();
    names.replaceChildren(
      ...found.map((e) => {
        const o = document.createElement("option");
        o.value = e.entity_id;
        const also = e.aliases.find((a) => a !== e.label && a.toLowerCase().includes(lower));
        o.label = `${e.label}${also ? " (" + also + ")" : ""} · ${e.type} · ${e.passages}`;
        return o;
      }),
    );
  };
  entity.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(suggest, 120);
  });
}

// The cited lines in the middle of the view once the browser has gone to #L…, which
// (the way without script) puts them at the top.
const cited = document.querySelector(".doc .line.hl");
if (cited) {
  window.addEventListener("load", () => {
    const last = document.querySelectorAll(".doc .line.hl");
    const tall = last[last.length - 1].getBoundingClientRect().bottom - cited.getBoundingClientRect().top;
    cited.scrollIntoView({ block: tall < window.innerHeight * 0.6 ? "center" : "start" });
  });
}

// Gazetteer edits: the form's fields as the JSON of POST /api/gazetteer, then the page the
// server redirects to (the entity's), or its one error message under the form.
const remembered = (name) => {
  try {
    return localStorage.getItem("kbx." + name) || "";
  } catch {
    return "";
  }
};
for (const input of document.querySelectorAll("input[data-remember]")) {
  if (!input.value) input.value = remembered(input.dataset.remember);
}
for (const form of document.querySelectorAll("form[data-edit]")) {
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const body = { action: form.dataset.edit };
    for (const [key, value] of new FormData(form)) {
      const v = String(value).trim();
      if (key === "alias") body.alias = v.split("\n").map((a) => a.trim()).filter(Boolean);
      else if (key === "ignore-case") body[key] = true;
      else if (v) body[key] = v;
    }
    for (const input of form.querySelectorAll("input[data-remember]")) {
      try {
        localStorage.setItem("kbx." + input.dataset.remember, input.value.trim());
      } catch {}
    }
    const out = form.querySelector(".form-error");
    const button = form.querySelector("button[type=submit]");
    const say = (text) => {
      out.textContent = text;
      out.hidden = false;
    };
    out.hidden = true;
    button.disabled = true;
    try {
      const r = await fetch(form.action, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
      if (r.redirected) {
        location.assign(r.url);
        return;
      }
      const problem = await r.json().catch(() => null);
      say(problem ? problem.message + (problem.hint ? ` (${problem.hint})` : "") : `the server answered ${r.status}`);
    } catch (err) {
      say(`the server did not answer: ${err}`);
    } finally {
      button.disabled = false;
    }
  });
}
