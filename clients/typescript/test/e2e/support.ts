// What Tests/e2e/test_typescript_client.py hands these tests: the gateway, a fresh app, and its
// helper (mail and SMS codes, provider tokens, the software passkey authenticator, expired tokens
// signed with the app's key, TOTP codes). Without the variables every test skips.
import { webcrypto } from "node:crypto";

// Node 18 (Debian 12's nodejs) has WebCrypto only as node:crypto's `webcrypto`, not as the
// global that browsers, React Native polyfills and Node 20 give the client.
if (!(globalThis as { crypto?: unknown }).crypto) Object.defineProperty(globalThis, "crypto", { value: webcrypto, configurable: true });

import { IdentityClient, IdentityClientOptions, IdentityError, MemoryStorage, TokenStorage } from "../../src/index.js";

export const env = {
  baseUrl: process.env.IDENTITY_TS_E2E_BASE_URL ?? "",
  appKey: process.env.IDENTITY_TS_E2E_APP_KEY ?? "",
  helperUrl: process.env.IDENTITY_TS_E2E_HELPER_URL ?? "",
  refreshGraceSeconds: Number(process.env.IDENTITY_TS_E2E_REFRESH_GRACE_SECONDS ?? "30"),
};

/** `{ skip }` for node:test when the harness did not set the variables. */
export const when = { skip: !env.baseUrl || !env.appKey || !env.helperUrl ? "IDENTITY_TS_E2E_* not set: run Tests/e2e/test_typescript_client.py" : false };

export const PASSWORD = "correct horse battery staple";

export function uniqueEmail(tag: string): string {
  return `ts-${tag}-${Math.random().toString(36).slice(2, 12)}@example.com`;
}

/** A client of the app, as one app installation (its own storage unless given one). */
export function client(options: Partial<IdentityClientOptions> & { storage?: TokenStorage } = {}): IdentityClient {
  return new IdentityClient({
    baseUrl: env.baseUrl,
    appKey: env.appKey,
    storage: options.storage ?? new MemoryStorage(),
    headers: { "User-Agent": "TypeScriptClientE2E" },
    ...options,
  });
}

export async function helper(path: string, body: Record<string, unknown> = {}): Promise<any> {
  const response = await fetch(env.helperUrl + path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  const answer = await response.json();
  if (response.status !== 200) throw new Error(`helper ${path}: ${JSON.stringify(answer)}`);
  return answer;
}

/** Runs `send` (which makes the service mail `email`) and returns the code (and link) of that mail. */
export async function mailedCode(email: string, send: () => Promise<unknown>): Promise<{ code: string; link: string | null }> {
  const { mark } = await helper("/mail/mark");
  await send();
  return helper("/mail/code", { email, after: mark });
}

export async function googleToken(claims: { sub?: string; email?: string } = {}): Promise<string> {
  return (await helper("/google/token", claims)).id_token;
}

/** A TOTP code (pyotp, in the helper) away from a 30-second step edge. */
export async function totp(secret: string, offset = 0): Promise<string> {
  const into = Math.floor(Date.now() / 1000) % 30;
  if (into > 26) await sleep((31 - into) * 1000);
  return (await helper("/totp/code", { secret, offset })).code;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Asserts that `promise` rejects with an IdentityError of `code`, and returns it. */
export async function rejectsWith(code: string, promise: Promise<unknown>): Promise<IdentityError> {
  try {
    const value = await promise;
    throw new Error(`expected ${code}, got ${JSON.stringify(value)}`);
  } catch (error) {
    if (!(error instanceof IdentityError)) throw error;
    if (error.code !== code) throw new Error(`expected ${code}, got ${error.code} (${error.status})`);
    return error;
  }
}

/** A `fetch` between the client and the real gateway: every request is really sent and counted
 * (method, path, status), and the answers of chosen requests can be thrown away after the
 * service processed them (a connection lost on the way back). It changes nothing else. */
export class Tap {
  readonly seen: { method: string; path: string; status?: number; body?: string }[] = [];
  private lose = new Map<string, number>();

  loseAnswers(path: string, count = 1): void {
    this.lose.set(path, count);
  }

  readonly fetch = async (input: string, init: RequestInit): Promise<Response> => {
    const path = new URL(input).pathname;
    const entry: { method: string; path: string; status?: number; body?: string } = {
      method: init.method ?? "GET",
      path,
      body: typeof init.body === "string" ? init.body : undefined,
    };
    this.seen.push(entry);
    const response = await fetch(input, init);
    entry.status = response.status;
    const left = this.lose.get(path) ?? 0;
    if (left > 0) {
      this.lose.set(path, left - 1);
      await response.arrayBuffer();
      throw new TypeError("fetch failed (answer lost by the test's tap)");
    }
    return response;
  };

  to(path: string) {
    return this.seen.filter((s) => s.path === path);
  }
}
