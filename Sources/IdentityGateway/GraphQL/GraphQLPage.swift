import Foundation
import IdentityKit

/// `GET /graphql` in a browser: a self-contained page (no outside scripts) to send a query
/// with an app key and a bearer token, and to read the schema (`?sdl`). Its own inline
/// script and style run by hash only.
enum GraphQLPage {
    static let html = #"""
    <!doctype html>
    <html lang="en"><head><meta charset="utf-8"><title>GraphQL</title>
    <link rel="icon" href="data:,">
    <style>
      body{font:15px/1.5 system-ui,sans-serif;max-width:1100px;margin:2rem auto;padding:0 1rem;color:#222}
      textarea,input{width:100%;font-family:ui-monospace,monospace;box-sizing:border-box}
      .row{display:flex;gap:1rem}.row>div{flex:1}
      pre{background:#f6f6f6;padding:.6rem;overflow:auto;white-space:pre-wrap;min-height:8rem}
    </style></head>
    <body>
    <h1>GraphQL</h1>
    <p>POST /graphql with <code>{query, variables, operationName}</code>. The schema: <a href="/graphql?sdl">SDL</a>.</p>
    <label>X-App-Key <input id="appKey" placeholder="ak_…"></label>
    <label>Bearer token <input id="bearer" placeholder="token"></label>
    <div class="row">
      <div><label>Query <textarea id="query" rows="14">query Me {
      me { id username email isEmailVerified }
    }</textarea></label>
      <label>Variables (JSON) <textarea id="variables" rows="4">{}</textarea></label>
      <button id="run">Run</button></div>
      <div><label>Response</label><pre id="out"></pre></div>
    </div>
    <h2>Schema</h2><pre id="sdl">Loading…</pre>
    <script>
    fetch("/graphql?sdl").then(r => r.text()).then(t => { document.getElementById("sdl").textContent = t; });
    document.getElementById("run").onclick = async () => {
      const headers = {"Content-Type": "application/json", "X-App-Key": document.getElementById("appKey").value};
      const token = document.getElementById("bearer").value;
      if (token) headers["Authorization"] = "Bearer " + token;
      let variables = {};
      try { variables = JSON.parse(document.getElementById("variables").value || "{}"); } catch (e) {
        document.getElementById("out").textContent = "Variables: " + e; return; }
      const r = await fetch("/graphql", {method: "POST", headers,
        body: JSON.stringify({query: document.getElementById("query").value, variables})});
      const text = await r.text();
      let shown = text; try { shown = JSON.stringify(JSON.parse(text), null, 2); } catch (e) {}
      document.getElementById("out").textContent = r.status + "\n" + shown;
    };
    </script>
    </body></html>
    """#

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
