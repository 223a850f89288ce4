// A stubbed `fetch`: records every request and answers from a handler, as the service would.

import { webcrypto } from "node:crypto";

// Node 18 (Debian 12's nodejs) has WebCrypto only as node:crypto's `webcrypto`, not as the
// global that browsers, React Native polyfills and Node 20 give the client.
if (!(globalThis as { crypto?: unknown }).crypto) Object.defineProperty(globalThis, "crypto", { value: webcrypto, configurable: true });

export interface Seen {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: any;
  credentials?: string;
}

export type Handler = (request: Seen) => Response | Promise<Response>;

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(status === 204 ? null : JSON.stringify(body), {
    status,
    headers: { "Content-Type": status >= 400 ? "application/problem+json" : "application/json", ...headers },
  });
}

export function problem(status: number, code: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): Response {
  return json(status, { type: "about:blank", title: "x", status, code, detail: "d", request_id: "req_1", ...extra }, headers);
}

export class Stub {
  readonly seen: Seen[] = [];
  constructor(public handler: Handler) {}

  readonly fetch = async (input: string, init: RequestInit): Promise<Response> => {
    const url = new URL(input);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries((init.headers ?? {}) as Record<string, string>)) headers[k.toLowerCase()] = v;
    const request: Seen = {
      method: init.method ?? "GET",
      path: url.pathname,
      headers,
      body: typeof init.body === "string" ? JSON.parse(init.body) : undefined,
      credentials: init.credentials,
    };
    this.seen.push(request);
    // An answer comes later, as over a network: parallel calls really overlap.
    await new Promise((resolve) => setTimeout(resolve, 1));
    return this.handler(request);
  };

  to(path: string): Seen[] {
    return this.seen.filter((s) => s.path === path);
  }
}

/** A JWT-shaped token (unsigned; the client only reads `exp`). */
export function jwt(exp: number, extra: Record<string, unknown> = {}): string {
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
  return `${b64({ alg: "RS256", typ: "at+jwt" })}.${b64({ exp, ...extra })}.c2ln`;
}

declare const Buffer: { from(s: string): { toString(encoding: string): string } };

export const USER = {
  uid: "01j9x6k3m4q5r6s7t8v9w0x1y2",
  email: "jane@example.com",
  email_verified: false,
  phone: null,
  username: null,
  first_name: "Jane",
  last_name: null,
  photo_url: null,
  is_guest: false,
  has_password: true,
  providers: ["password"],
  roles: [],
  mfa_enabled: false,
  created_at: "2026-09-27T10:15:00.000000Z",
};

let counter = 0;
/** A token answer; each call gets new tokens. */
export function tokens(overrides: Record<string, unknown> = {}, lifetime = 3600): Record<string, unknown> {
  counter += 1;
  return {
    data: {
      access_token: jwt(Math.floor(Date.now() / 1000) + lifetime, { n: counter }),
      token_type: "Bearer",
      expires_in: lifetime,
      refresh_token: `rt_${counter}`,
      session_id: `ses_${counter}`,
      is_new_user: false,
      user: USER,
      ...overrides,
    },
  };
}

export const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
