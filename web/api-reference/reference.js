// The API reference at /api/docs: renders /api/docs/openapi.json (operations by tag, their
// fields, answers and error codes, the error catalogue) and sends any operation from the page.
// Served by the gateway under a CSP that allows only this origin's own files: no inline script,
// no eval, nothing fetched from elsewhere. Every text from the document is set as text, never
// parsed as HTML.
"use strict";

(() => {
  const METHODS = ["get", "post", "put", "patch", "delete"];
  const credentialKeys = ["appKey", "bearer", "secretKey"];
  let doc = null;

  // --- DOM helpers ------------------------------------------------------------------------------

  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") el.className = value;
      else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
      else el.setAttribute(key, value === true ? "" : String(value));
    }
    append(el, children);
    return el;
  }

  function append(el, children) {
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      el.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return el;
  }

  /// Prose from the document: `code` spans become <code>, and an error code in one links to its
  /// section of the catalogue.
  function prose(text) {
    const out = [];
    String(text || "").split("`").forEach((part, index) => {
      if (index % 2 === 0) { if (part) out.push(part); return; }
      if (errorCatalogue().has(part)) out.push(h("a", {href: "#error-" + part}, h("code", {}, part)));
      else out.push(h("code", {}, part));
    });
    return out;
  }

  const pretty = value => JSON.stringify(value, null, 2);

  // --- the document -----------------------------------------------------------------------------

  function lookup(ref) {
    if (typeof ref !== "string" || !ref.startsWith("#/")) return undefined;
    return ref.slice(2).split("/").reduce((node, key) => node === undefined ? undefined
      : node[key.replace(/~1/g, "/").replace(/~0/g, "~")], doc);
  }

  /// Follows `$ref`s (a cycle stops after a few).
  function deref(node) {
    for (let i = 0; i < 8 && node && typeof node === "object" && node.$ref; i++) node = lookup(node.$ref) || {};
    return node || {};
  }

  const refName = node => node && node.$ref ? node.$ref.split("/").pop() : null;

  /// Every operation, in path order, with its tag.
  function operations() {
    const out = [];
    for (const [path, item] of Object.entries(doc.paths || {})) {
      for (const method of METHODS) {
        const op = item[method];
        if (!op) continue;
        out.push({path, method, op, id: op.operationId || method + path, tag: (op.tags && op.tags[0]) || "Other"});
      }
    }
    return out;
  }

  let catalogue = null;
  /// Error code → {code, status, title, description}, from the document's `x-error-catalogue`.
  function errorCatalogue() {
    if (catalogue) return catalogue;
    catalogue = new Map();
    for (const entry of (doc && doc["x-error-catalogue"]) || []) catalogue.set(entry.code, entry);
    return catalogue;
  }

  // --- schemas ----------------------------------------------------------------------------------

  /// An object schema's fields, `allOf` merged; `anyOf`/`oneOf` of objects give their fields too
  /// (each marked as belonging to one alternative).
  function fieldsOf(schema, seen = new Set()) {
    const name = refName(schema);
    if (name && seen.has(name)) return {fields: [], alternatives: []};
    if (name) seen = new Set([...seen, name]);
    schema = deref(schema);
    const fields = [];
    const alternatives = [];
    const required = new Set(schema.required || []);
    for (const [field, sub] of Object.entries(schema.properties || {})) {
      fields.push({name: field, schema: sub, required: required.has(field)});
    }
    for (const part of schema.allOf || []) {
      const inner = fieldsOf(part, seen);
      for (const f of inner.fields) {
        const existing = fields.find(x => x.name === f.name);
        if (existing) { existing.required = existing.required || f.required; if (!existing.schema.type && !existing.schema.$ref) existing.schema = {...deref(f.schema), ...existing.schema}; }
        else fields.push(f);
      }
      const partRequired = new Set(deref(part).required || []);
      for (const f of fields) if (partRequired.has(f.name)) f.required = true;
      alternatives.push(...inner.alternatives);
    }
    const choice = schema.anyOf || schema.oneOf;
    if (choice && choice.some(c => Object.keys(deref(c).properties || {}).length || (deref(c).required || []).length)) {
      // Named only when every alternative can be: a rule such as "this field needs that one"
      // is said by the fields' descriptions instead.
      const names = choice.map(c => refName(c) || (deref(c).required || []).join(" + "));
      if (names.every(Boolean)) alternatives.push(names);
      for (const c of choice) {
        for (const f of fieldsOf(c, seen).fields) {
          if (!fields.find(x => x.name === f.name)) fields.push({...f, required: false, inChoice: true});
        }
      }
    }
    return {fields, alternatives};
  }

  function typeLabel(schema, depth = 0) {
    if (!schema || depth > 4) return "any";
    const name = refName(schema);
    const s = deref(schema);
    if (s.const !== undefined) return JSON.stringify(s.const);
    if (s.enum) return s.enum.map(v => JSON.stringify(v)).join(" | ");
    const choice = s.oneOf || s.anyOf;
    if (choice) return choice.map(c => typeLabel(c, depth + 1)).join(" | ");
    if (s.allOf && !s.type) return name || s.allOf.map(c => typeLabel(c, depth + 1)).filter(t => t !== "any").join(" & ") || "object";
    const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
    const label = types.map(t => t === "array" ? "array of " + typeLabel(s.items, depth + 1)
      : t === "object" && name ? name : t).join(" | ");
    return label || name || (s.properties ? "object" : "any");
  }

  function constraints(schema) {
    const s = deref(schema);
    const out = [];
    if (s.format) out.push("format: " + s.format);
    if (s.minLength !== undefined && s.maxLength !== undefined) out.push(`${s.minLength}–${s.maxLength} characters`);
    else if (s.minLength !== undefined) out.push(`at least ${s.minLength} characters`);
    else if (s.maxLength !== undefined) out.push(`at most ${s.maxLength} characters`);
    if (s.minimum !== undefined) out.push("minimum " + s.minimum);
    if (s.maximum !== undefined) out.push("maximum " + s.maximum);
    if (s.minItems !== undefined) out.push(`at least ${s.minItems} items`);
    if (s.maxItems !== undefined) out.push(`at most ${s.maxItems} items`);
    if (s.pattern) out.push("pattern " + s.pattern);
    if (s.default !== undefined) out.push("default " + JSON.stringify(s.default));
    if (s.items) { const items = constraints(s.items); if (items.length) out.push("each: " + items.join(", ")); }
    return out;
  }

  function fieldRows(schema, prefix, depth) {
    const rows = [];
    for (const f of fieldsOf(schema).fields) {
      const s = deref(f.schema);
      const name = prefix + f.name;
      rows.push(h("tr", {class: "field", "data-field": name},
        h("td", {}, h("code", {}, name), f.required ? h("span", {class: "required", title: "required"}, "required") : null,
          f.inChoice ? h("span", {class: "optional"}, "one of the shapes") : null),
        h("td", {class: "type"}, typeLabel(f.schema)),
        h("td", {}, constraints(f.schema).map(c => h("span", {class: "constraint"}, c)),
          s.description ? h("div", {}, prose(s.description)) : null,
          s.examples && s.examples.length ? h("div", {class: "example-value"}, "e.g. ", h("code", {}, JSON.stringify(s.examples[0]))) : null)));
      if (depth < 2) {
        const nested = s.type === "array" || (Array.isArray(s.type) && s.type.includes("array")) ? s.items : f.schema;
        const suffix = nested === f.schema ? "." : "[].";
        if (nested && (deref(nested).properties || deref(nested).allOf)) rows.push(...fieldRows(nested, name + suffix, depth + 1));
      }
    }
    return rows;
  }

  function fieldsTable(schema) {
    const {fields, alternatives} = fieldsOf(schema);
    if (!fields.length) return h("p", {class: "type"}, typeLabel(schema));
    return [
      alternatives.map(alts => h("p", {class: "hint"}, "One of: ", alts.join(" · "))),
      h("table", {class: "fields"},
        h("thead", {}, h("tr", {}, h("th", {}, "Field"), h("th", {}, "Type"), h("th", {}, "Rules and meaning"))),
        h("tbody", {}, fieldRows(schema, "", 0)))];
  }

  /// An example for a schema: its own, else one made of its fields' examples.
  function exampleOf(schema, depth = 0) {
    if (!schema || depth > 5) return undefined;
    const s = deref(schema);
    if (s.example !== undefined) return s.example;
    if (s.examples && s.examples.length) return s.examples[0];
    if (s.const !== undefined) return s.const;
    if (s.enum && s.enum.length) return s.enum[0];
    const {fields} = fieldsOf(schema);
    if (fields.length) {
      const out = {};
      for (const f of fields) {
        if (f.inChoice && !f.required) continue;
        const value = exampleOf(f.schema, depth + 1);
        if (value !== undefined) out[f.name] = value;
      }
      return Object.keys(out).length ? out : undefined;
    }
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (types.includes("array")) { const item = exampleOf(s.items, depth + 1); return item === undefined ? undefined : [item]; }
    return undefined;
  }

  function mediaExample(media) {
    if (!media) return undefined;
    if (media.example !== undefined) return media.example;
    const named = Object.values(media.examples || {})[0];
    if (named && named.value !== undefined) return named.value;
    return exampleOf(media.schema);
  }

  // --- one operation ----------------------------------------------------------------------------

  function securityLabel(op) {
    const security = op.security || doc.security || [];
    if (!security.length) return "No credentials";
    return security.map(req => Object.keys(req).map(name => ({
      appKey: "X-App-Key", bearer: "a user’s bearer token", secretKey: "the app’s secret key",
      secretKeyBasic: "the app’s secret key (HTTP Basic)"})[name] || name).join(" + ") || "none").join(", or ");
  }

  function parametersOf(entry) {
    const item = doc.paths[entry.path] || {};
    return [...(item.parameters || []), ...(entry.op.parameters || [])].map(deref);
  }

  function responsesBlock(entry) {
    const answers = Object.entries(entry.op.responses || {}).sort(([a], [b]) => a.localeCompare(b));
    return h("div", {class: "responses"}, answers.map(([status, raw]) => {
      const response = deref(raw);
      const codes = response["x-error-codes"] || [];
      const [mediaType, media] = Object.entries(response.content || {})[0] || [];
      const ok = status.startsWith("2") || status.startsWith("3");
      const example = ok ? mediaExample(media) : undefined;
      return h("div", {class: "response " + (ok ? "ok" : "error"), "data-status": status},
        h("h5", {}, h("span", {class: "status"}, status), " ", codes.length ? "" : prose(response.description), mediaType ? h("span", {class: "media"}, mediaType) : null),
        codes.length ? h("ul", {class: "codes"}, codes.map(code => {
          const known = errorCatalogue().get(code);
          return h("li", {"data-code": code}, h("a", {href: "#error-" + code}, h("code", {}, code)),
            known ? [" — ", prose(known.description)] : null);
        })) : null,
        ok && media && media.schema ? h("details", {class: "schema"}, h("summary", {}, "Fields of the answer"), fieldsTable(media.schema)) : null,
        example !== undefined ? h("details", {class: "example", open: status === "200" || status === "201"},
          h("summary", {}, "Example answer"), h("pre", {}, pretty(example))) : null);
    }));
  }

  function tryIt(entry, bodyExample) {
    const params = parametersOf(entry).filter(p => p.in === "path" || p.in === "query");
    const inputs = params.map(p => h("label", {class: "param"}, `${p.name} (${p.in})`,
      h("input", {"data-param": p.name, "data-in": p.in, placeholder: typeLabel(p.schema)})));
    const media = entry.op.requestBody && entry.op.requestBody.content
      ? Object.keys(entry.op.requestBody.content)[0] : null;
    const body = media ? h("textarea", {class: "body", rows: 8, spellcheck: "false"},
      bodyExample === undefined ? "{}" : pretty(bodyExample)) : null;
    const out = h("pre", {class: "out", "aria-live": "polite"});
    const button = h("button", {type: "button", class: "send"}, "Send");
    button.addEventListener("click", async () => {
      out.textContent = "Sending…";
      let path = entry.path;
      const query = new URLSearchParams();
      for (const input of inputs.map(l => l.querySelector("input"))) {
        const value = input.value;
        if (input.dataset.in === "path") path = path.replace("{" + input.dataset.param + "}", encodeURIComponent(value));
        else if (value !== "") query.append(input.dataset.param, value);
      }
      const headers = {};
      const appKey = document.getElementById("appKey").value.trim();
      const bearer = document.getElementById("bearer").value.trim();
      const secret = document.getElementById("secretKey").value.trim();
      const schemes = (entry.op.security || []).flatMap(req => Object.keys(req));
      if (appKey) headers["X-App-Key"] = appKey;
      if (schemes.includes("secretKey") && secret) headers.Authorization = "Bearer " + secret;
      else if (bearer) headers.Authorization = "Bearer " + bearer;
      const init = {method: entry.method.toUpperCase(), headers};
      if (body) { headers["Content-Type"] = media === "application/json" ? "application/json" : media; init.body = body.value; }
      try {
        const answer = await fetch(path + (query.toString() ? "?" + query : ""), init);
        const text = await answer.text();
        let shown = text;
        let parsed;
        try { parsed = JSON.parse(text); shown = pretty(parsed); } catch (e) { /* not JSON: shown as is */ }
        out.textContent = `${answer.status} ${answer.statusText}\n${shown}`;
        // An answer that starts a session (sign-up, sign-in, refresh) carries the user's token:
        // the next call is made as that user.
        const access = parsed && (parsed.access_token || (parsed.data && parsed.data.access_token));
        if (typeof access === "string") { document.getElementById("bearer").value = access; saveCredentials(); }
        const code = parsed && parsed.code;
        if (typeof code === "string" && errorCatalogue().has(code)) {
          out.append(document.createTextNode("\n"), h("a", {href: "#error-" + code}, "What " + code + " means"));
        }
      } catch (error) {
        out.textContent = "The request failed: " + error.message;
      }
    });
    return h("div", {class: "try"}, h("h4", {}, "Try it"), inputs, body ? h("label", {}, "Body (" + media + ")", body) : null, button, out);
  }

  function operationSection(entry) {
    const {op} = entry;
    const requestBody = op.requestBody ? deref(op.requestBody) : null;
    const [media, content] = requestBody ? Object.entries(requestBody.content || {})[0] || [] : [];
    const bodyExample = content ? mediaExample(content) : undefined;
    const params = parametersOf(entry);
    const limits = op["x-rate-limits"] || [];
    return h("section", {class: "op", id: "op-" + entry.id, "data-method": entry.method, "data-path": entry.path, "data-operation": entry.id},
      h("h3", {}, h("a", {href: "#op-" + entry.id, class: "anchor"}, h("span", {class: "method " + entry.method}, entry.method.toUpperCase()),
        h("code", {class: "path"}, entry.path)), h("span", {class: "summary"}, prose(op.summary))),
      op.description ? h("p", {class: "description"}, prose(op.description)) : null,
      h("p", {class: "meta"}, h("span", {}, "Credentials: ", securityLabel(op)),
        h("span", {}, "operationId ", h("code", {}, entry.id))),
      limits.length ? h("details", {class: "limits"}, h("summary", {}, "Rate limits"), h("ul", {}, limits.map(l => h("li", {}, l)))) : null,
      params.length ? [h("h4", {}, "Parameters"), h("table", {class: "fields params"},
        h("thead", {}, h("tr", {}, h("th", {}, "Name"), h("th", {}, "In"), h("th", {}, "Type"), h("th", {}, "Rules and meaning"))),
        h("tbody", {}, params.map(p => h("tr", {},
          h("td", {}, h("code", {}, p.name), p.required ? h("span", {class: "required"}, "required") : null),
          h("td", {}, p.in), h("td", {class: "type"}, typeLabel(p.schema)),
          h("td", {}, constraints(p.schema).map(c => h("span", {class: "constraint"}, c)), p.description ? h("div", {}, prose(p.description)) : null)))))] : null,
      requestBody ? [h("h4", {}, "Request body ", h("span", {class: "media"}, media), requestBody.required ? h("span", {class: "required"}, "required") : null),
        requestBody.description ? h("p", {}, prose(requestBody.description)) : null,
        content && content.schema ? fieldsTable(content.schema) : null,
        bodyExample !== undefined ? h("details", {class: "example", open: true}, h("summary", {}, "Example request"), h("pre", {}, pretty(bodyExample))) : null] : null,
      h("h4", {}, "Responses"), responsesBlock(entry),
      tryIt(entry, bodyExample));
  }

  // --- the page ---------------------------------------------------------------------------------

  function tagsInOrder(entries) {
    const declared = (doc.tags || []).map(t => t.name);
    const used = [...new Set(entries.map(e => e.tag))];
    return [...declared.filter(t => used.includes(t)), ...used.filter(t => !declared.includes(t))];
  }

  function errorSection(entries) {
    const answeredBy = new Map();
    for (const entry of entries) {
      for (const response of Object.values(entry.op.responses || {})) {
        for (const code of deref(response)["x-error-codes"] || []) {
          if (!answeredBy.has(code)) answeredBy.set(code, []);
          answeredBy.get(code).push(entry);
        }
      }
    }
    const codes = [...errorCatalogue().values()].sort((a, b) => a.code.localeCompare(b.code));
    return h("section", {class: "errors", id: "errors"},
      h("h2", {}, "Error codes"),
      h("p", {}, "Every error is ", h("code", {}, "application/problem+json"), " (RFC 9457) with a stable ", h("code", {}, "code"),
        "; its ", h("code", {}, "type"), " links here. Match on ", h("code", {}, "code"), ", never on ", h("code", {}, "detail"), "."),
      codes.map(entry => {
        const ops = answeredBy.get(entry.code) || [];
        return h("article", {class: "error-code", id: "error-" + entry.code, "data-code": entry.code},
          h("h3", {}, h("code", {}, entry.code), " ", h("span", {class: "status"}, `${entry.status} ${entry.title || ""}`)),
          h("p", {}, prose(entry.description)),
          entry.remedy ? h("p", {class: "remedy"}, prose(entry.remedy)) : null,
          ops.length ? h("details", {}, h("summary", {}, `Answered by ${ops.length} operation${ops.length === 1 ? "" : "s"}`),
            h("ul", {}, ops.map(o => h("li", {}, h("a", {href: "#op-" + o.id}, o.method.toUpperCase() + " " + o.path)))))
            : h("p", {class: "hint"}, "Any operation may answer it."));
      }));
  }

  function render() {
    const entries = operations();
    const content = document.getElementById("content");
    const nav = document.getElementById("nav");
    content.replaceChildren();
    nav.replaceChildren();
    const info = doc.info || {};
    const servers = (doc.servers || []).map(s => s.url).join(", ");
    content.append(h("section", {class: "intro", id: "intro"},
      h("h2", {}, info.title || "API", " ", h("span", {class: "version"}, info.version || "")),
      h("p", {}, prose(info.description)),
      h("p", {class: "meta"}, "The document: ", h("a", {href: "/api/docs/openapi.json"}, "openapi.json"),
        servers ? [" · server: ", h("code", {}, servers)] : null)));
    const tags = new Map((doc.tags || []).map(t => [t.name, t]));
    for (const tag of tagsInOrder(entries)) {
      const members = entries.filter(e => e.tag === tag);
      const tagId = "tag-" + tag.replace(/[^A-Za-z0-9_-]/g, "-");
      const description = tags.get(tag) && tags.get(tag).description;
      content.append(h("section", {class: "tag", id: tagId, "data-tag": tag},
        h("h2", {}, tag), description ? h("p", {class: "description"}, prose(description)) : null,
        members.map(operationSection)));
      nav.append(h("div", {class: "nav-tag", "data-tag": tag}, h("a", {href: "#" + tagId, class: "nav-tag-name"}, tag),
        h("ul", {}, members.map(e => h("li", {"data-operation": e.id}, h("a", {href: "#op-" + e.id},
          h("span", {class: "method " + e.method}, e.method.toUpperCase()), " ", e.path))))));
    }
    content.append(errorSection(entries));
    nav.append(h("div", {class: "nav-tag", "data-tag": "errors"}, h("a", {href: "#errors", class: "nav-tag-name"}, "Error codes")));
    search();
    showTarget();
  }

  // --- search -----------------------------------------------------------------------------------

  function search() {
    const words = document.getElementById("search").value.toLowerCase().split(/\s+/).filter(Boolean);
    const matches = el => words.every(w => el.textContent.toLowerCase().includes(w) || (el.dataset.path || "").includes(w)
      || (el.dataset.operation || "").toLowerCase().includes(w) || (el.dataset.code || "").includes(w));
    for (const section of document.querySelectorAll("section.tag")) {
      let any = false;
      for (const op of section.querySelectorAll("section.op")) {
        // Match on what names the operation (path, summary, description, its fields and codes).
        const hit = !words.length || matches(op);
        op.hidden = !hit;
        const link = document.querySelector(`#nav li[data-operation="${CSS.escape(op.dataset.operation)}"]`);
        if (link) link.hidden = !hit;
        any = any || hit;
      }
      section.hidden = !any;
      const navTag = document.querySelector(`#nav .nav-tag[data-tag="${CSS.escape(section.dataset.tag)}"]`);
      if (navTag) navTag.hidden = !any;
    }
    for (const article of document.querySelectorAll("article.error-code")) article.hidden = words.length > 0 && !matches(article);
    const intro = document.getElementById("intro");
    if (intro) intro.hidden = words.length > 0;
  }

  /// The element the URL's fragment names (an operation or an error code), made visible and
  /// scrolled to: the page is built after the browser looked for it.
  function showTarget() {
    const id = decodeURIComponent(location.hash.slice(1));
    if (!id) return;
    const target = document.getElementById(id);
    if (!target) return;
    for (let el = target; el; el = el.parentElement) if (el.hidden) el.hidden = false;
    for (const old of document.querySelectorAll(".targeted")) old.classList.remove("targeted");
    target.classList.add("targeted");
    target.scrollIntoView();
  }

  // --- credentials (this tab only) --------------------------------------------------------------

  function saveCredentials() {
    try {
      for (const key of credentialKeys) sessionStorage.setItem("identity-docs-" + key, document.getElementById(key).value);
    } catch (e) { /* storage unavailable: the fields still work */ }
  }

  function loadCredentials() {
    try {
      for (const key of credentialKeys) {
        const value = sessionStorage.getItem("identity-docs-" + key);
        if (value) document.getElementById(key).value = value;
      }
    } catch (e) { /* storage unavailable */ }
  }

  // --- start ------------------------------------------------------------------------------------

  function start() {
    loadCredentials();
    for (const key of credentialKeys) document.getElementById(key).addEventListener("input", saveCredentials);
    document.getElementById("search").addEventListener("input", search);
    window.addEventListener("hashchange", showTarget);
    fetch("/api/docs/openapi.json", {headers: {Accept: "application/json"}})
      .then(answer => { if (!answer.ok) throw new Error(`${answer.status} ${answer.statusText}`); return answer.json(); })
      .then(document_ => { doc = document_; render(); })
      .catch(error => { document.getElementById("content").replaceChildren(h("p", {class: "failed"}, "The document could not be loaded: " + error.message)); });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
