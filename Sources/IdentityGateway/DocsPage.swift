import Foundation
import IdentityKit

/// `GET /api/docs`: a self-contained page (no outside scripts, so it works air-gapped) that
/// renders `/api/docs/openapi.json` and lets a reader send any request with their app key and
/// token; an answer carrying `data.access_token` fills the token field (sign-up, then `/v1/me`).
/// Tested in Chromium (Tests/e2e/test_browser.py): no console error under its own CSP (the
/// empty `data:` icon keeps the browser from asking for `/favicon.ico`, a logged 404).
enum DocsPage {
    static let html = #"""
    <!doctype html>
    <html lang="en"><head><meta charset="utf-8"><title>Identity service API</title>
    <link rel="icon" href="data:,">
    <style>
      body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#222}
      details{border:1px solid #ddd;border-radius:6px;margin:.5rem 0;padding:.5rem .8rem}
      summary{cursor:pointer;font-family:ui-monospace,monospace}
      .m{display:inline-block;width:4.5rem;font-weight:700}
      textarea,input{width:100%;font-family:ui-monospace,monospace;box-sizing:border-box}
      pre{background:#f6f6f6;padding:.6rem;overflow:auto;white-space:pre-wrap}
    </style></head>
    <body>
    <h1>Identity service API</h1>
    <p>From <a href="/api/docs/openapi.json">openapi.json</a>. Errors are problem+json with a stable <code>code</code>.</p>
    <label>X-App-Key <input id="appKey" placeholder="ak_…"></label>
    <label>Bearer token <input id="bearer" placeholder="eyJ…"></label>
    <div id="ops">Loading…</div>
    <script>
    const esc = s => String(s).replace(/[&<>"]/g, c => ({"&":"&amp;","<":"&lt;",">":"&gt;","\"":"&quot;"}[c]));
    fetch("/api/docs/openapi.json").then(r => r.json()).then(doc => {
      const ops = document.getElementById("ops"); ops.innerHTML = "";
      for (const [path, item] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(item)) {
          const d = document.createElement("details");
          const hasBody = !!op.requestBody;
          d.innerHTML = `<summary><span class="m">${esc(method.toUpperCase())}</span>${esc(path)} — ${esc(op.summary || "")}</summary>
            <label>Path <input class="path" value="${esc(path)}"></label>
            ${hasBody ? '<label>Body <textarea class="body" rows="5">{}</textarea></label>' : ""}
            <button>Send</button><pre class="out"></pre>`;
          d.querySelector("button").onclick = async () => {
            const headers = {"X-App-Key": document.getElementById("appKey").value};
            const token = document.getElementById("bearer").value;
            if (token) headers["Authorization"] = "Bearer " + token;
            const init = {method: method.toUpperCase(), headers};
            if (hasBody) { headers["Content-Type"] = "application/json"; init.body = d.querySelector(".body").value; }
            const r = await fetch(d.querySelector(".path").value, init);
            const text = await r.text();
            d.querySelector(".out").textContent = r.status + " " + r.statusText + "\n" + text;
            // An answer that starts a session (sign-up, sign-in, refresh) fills the token field,
            // so the next "Send" (GET /v1/me) is made as that user.
            let access;
            try { access = JSON.parse(text)?.data?.access_token; } catch (e) {}
            if (typeof access === "string") document.getElementById("bearer").value = access;
          };
          ops.appendChild(d);
        }
      }
    });
    </script>
    </body></html>
    """#

    /// Only this page's own inline script and style may run (by hash), it may talk only to this
    /// origin, and nothing may frame it: a token pasted into it cannot be sent elsewhere.
    static let contentSecurityPolicy: String = {
        func hash(of tag: String) -> String {
            guard let open = html.range(of: "<\(tag)>"),
                  let close = html.range(of: "</\(tag)>", range: open.upperBound..<html.endIndex) else { return "'none'" }
            let body = String(html[open.upperBound..<close.lowerBound])
            return "'sha256-" + Data(Digest.sha256(body)).base64EncodedString() + "'"
        }
        return "default-src 'none'; script-src \(hash(of: "script")); style-src \(hash(of: "style")); "
            + "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }()
}
