import { ErrorCode, IdentityClientError, IdentityError, isTransportFailure } from "./errors.js";
import * as api from "./generated/requests.js";
import { base64urlEncode, jwtClaims, secureRandomBytes, sha256Hex } from "./encoding.js";
import {
  CreationOptionsJSON,
  CredentialJSON,
  CredentialLike,
  RequestOptionsJSON,
  credentialToJSON,
  toCreationOptions,
  toRequestOptions,
} from "./passkeys.js";
import { MemoryStorage, StorageKeys, TokenStorage } from "./storage.js";
import {
  AppleNonce,
  AuthEvent,
  AuthState,
  DeletionProof,
  Device,
  DevicePlatform,
  MFAChallenge,
  MFAStatus,
  Passkey,
  PushKind,
  SessionInfo,
  SignInResult,
  TOTPEnrollment,
  TokenAnswer,
  User,
  camelize,
  toUser,
} from "./types.js";

type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface IdentityClientOptions {
  /** The service's root, e.g. `https://id.example.com` (the client adds `/v1/...`). */
  baseUrl: string;
  /** The app's public key (`X-App-Key`), safe to ship. Optional with cookie transport when the
   * service finds the app by its domain (`session-object` apps). */
  appKey?: string;
  /**
   * `bearer` (default): tokens in the client, the refresh token in `storage`.
   * `cookie`: for `session-object` apps in browsers: the session is an HttpOnly cookie set by
   * the service and sent with `credentials: "include"`; no token is ever visible to JavaScript.
   */
  transport?: "bearer" | "cookie";
  /** Where the session survives a restart (bearer transport). Default: memory only. */
  storage?: TokenStorage;
  /** The `fetch` to use (default: the platform's). */
  fetch?: FetchLike;
  /** Refresh this many seconds before the access token expires (default 60; at most half its lifetime). */
  refreshLeewaySeconds?: number;
  /** Extra headers on every request (e.g. `User-Agent` on React Native and Node; browsers ignore it). */
  headers?: Record<string, string>;
  /** Cryptographic random bytes (default `crypto.getRandomValues`). */
  randomBytes?: (count: number) => Uint8Array;
  /** The clock, in milliseconds (tests). */
  now?: () => number;
}

/** The session as the client keeps it (and stores it, bearer transport). */
interface StoredSession {
  refreshToken: string;
  accessToken: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
  /** When the client got the access token (to bound the refresh leeway by its lifetime). */
  obtainedAt: number;
  sessionId?: string;
  user?: User | null;
}

interface Answer {
  status: number;
  /** The parsed JSON body (null for 204 or an empty body). */
  body: unknown;
  headers: Headers;
}

interface SendOptions {
  body?: unknown;
  bearer?: string;
  /** Overrides the transport's credentials mode. */
  credentials?: RequestCredentials;
}

/** What a first-factor call sends, besides its body. */
export interface SignInOptions {
  /** While a guest is signed in, sign-ins carry its token and so upgrade it into this account
   * (same uid). `false` signs in to the other account instead (after 409 `auth/account-exists`). */
  upgradeGuest?: boolean;
}

type Listener = (state: AuthState) => void;

const SESSION_ENDED: readonly string[] = [
  ErrorCode.refreshTokenRevoked,
  ErrorCode.refreshTokenExpired,
  ErrorCode.invalidToken,
  ErrorCode.sessionExpired,
];

function isThenable<T>(value: unknown): value is PromiseLike<T> {
  return !!value && typeof (value as { then?: unknown }).then === "function";
}

/**
 * A client of the identity service's `/v1` API for one app: every sign-in method, the account,
 * sessions, devices, MFA and passkeys; it keeps the session itself.
 *
 * Signed-in calls use the access token, refresh it shortly before it expires, and refresh and
 * retry once when the service says `auth/token-expired` (or `auth/invalid-token`); there is only
 * ever one refresh in flight, however many calls run at once.
 */
export class IdentityClient {
  readonly transport: "bearer" | "cookie";
  /** Settles once the stored session (or, with cookie transport, the service) was consulted. */
  readonly ready: Promise<void>;

  private readonly baseUrl: string;
  private readonly appKey?: string;
  private readonly storage: TokenStorage;
  private readonly fetchImpl: FetchLike;
  private readonly leewayMs: number;
  private readonly extraHeaders: Record<string, string>;
  private readonly randomBytes: (count: number) => Uint8Array;
  private readonly now: () => number;

  private session: StoredSession | null = null;
  private state: AuthState = { status: "unknown" };
  private readonly listeners = new Set<Listener>();
  private refreshing: Promise<string> | null = null;
  /** Cookie transport: the session's id, from the sign-in answer (the token stays in the cookie). */
  private cookieSessionId: string | null = null;

  constructor(options: IdentityClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.appKey = options.appKey;
    this.transport = options.transport ?? "bearer";
    if (this.transport === "bearer" && !this.appKey) {
      throw new TypeError("appKey is required with bearer transport");
    }
    this.storage = options.storage ?? new MemoryStorage();
    const platformFetch = (globalThis as { fetch?: FetchLike }).fetch;
    this.fetchImpl = options.fetch ?? ((input, init) => (platformFetch as FetchLike).call(globalThis, input, init));
    this.leewayMs = (options.refreshLeewaySeconds ?? 60) * 1000;
    this.extraHeaders = options.headers ?? {};
    this.randomBytes = options.randomBytes ?? secureRandomBytes;
    this.now = options.now ?? (() => Date.now());
    this.ready = this.restore();
  }

  // MARK: state

  /** The current state (`unknown` only until `ready` settles). */
  get authState(): AuthState {
    return this.state;
  }

  /** The signed-in user as last seen, or null. */
  get currentUser(): User | null {
    return this.state.status === "signedIn" ? this.state.user : null;
  }

  /**
   * Calls `listener` at once with the current state, then on every change (sign-in, refresh,
   * profile update, sign-out, including a session the service ended). Returns the unsubscribe
   * function. Listeners get the user, never a token.
   */
  onAuthStateChange(listener: Listener): () => void {
    this.listeners.add(listener);
    const current = this.state;
    const initial: AuthState = current.status === "unknown" ? current : { ...current, event: "initial" };
    try {
      listener(initial);
    } catch {
      /* a listener's failure is its own */
    }
    return () => {
      this.listeners.delete(listener);
    };
  }

  private emit(state: AuthState): void {
    this.state = state;
    for (const listener of [...this.listeners]) {
      try {
        listener(state);
      } catch {
        /* a listener's failure is its own */
      }
    }
  }

  private signedIn(user: User | null, event: AuthEvent): void {
    this.emit({ status: "signedIn", user, event });
  }

  private restore(): Promise<void> {
    if (this.transport === "cookie") {
      return this.call(api.getMe(), { signedIn: false }).then(
        (answer) => this.signedIn(toUser(dataOf(answer)), "initial"),
        (error) => {
          if (error instanceof IdentityError && error.status === 401) this.emit({ status: "signedOut", event: "initial" });
          // Unreachable service: the state stays unknown; `refresh()` asks again.
        },
      );
    }
    const adopt = (raw: string | null | undefined) => {
      this.session = parseSession(raw);
      if (this.session) this.signedIn(this.session.user ?? null, "initial");
      else this.emit({ status: "signedOut", event: "initial" });
    };
    let raw: ReturnType<TokenStorage["getItem"]>;
    try {
      raw = this.storage.getItem(StorageKeys.session);
    } catch {
      raw = null;
    }
    if (isThenable<string | null | undefined>(raw)) {
      return Promise.resolve(raw).then(adopt, () => adopt(null));
    }
    // A synchronous storage (memory, localStorage): the state is known before the constructor returns.
    adopt(raw);
    return Promise.resolve();
  }

  // MARK: plumbing

  private url(path: string): string {
    return this.baseUrl + path;
  }

  /** One exchange: JSON in, JSON out; a status outside 2xx is thrown as IdentityError.
   * Transport failures (no answer) are thrown as `fetch` threw them (a TypeError). */
  private async send(method: string, path: string, options: SendOptions = {}): Promise<Answer> {
    const headers: Record<string, string> = { Accept: "application/json", ...this.extraHeaders };
    if (this.appKey) headers["X-App-Key"] = this.appKey;
    if (options.bearer) headers["Authorization"] = `Bearer ${options.bearer}`;
    const init: RequestInit = {
      method,
      headers,
      credentials: options.credentials ?? (this.transport === "cookie" ? "include" : "omit"),
    };
    if (options.body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(options.body);
    }
    const response = await this.fetchImpl(this.url(path), init);
    const text = response.status === 204 ? "" : await response.text();
    let body: unknown = null;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
    }
    if (response.status < 200 || response.status > 299) {
      throw IdentityError.fromResponse(response.status, body, response.headers);
    }
    if (body === undefined) {
      throw new IdentityClientError("client/invalid-response", `${method} ${path} answered ${response.status} with a body that is not JSON`);
    }
    return { status: response.status, body, headers: response.headers };
  }

  /** A declared request (`generated/requests.ts`, from the service's declarations): as the
   * signed-in user where the operation acts for one (or where `signedIn` says so: an optional
   * caller that is signed in), else with the app key alone and the send options given. */
  private async call(request: api.APIRequest, options: SendOptions & { signedIn?: boolean } = {}): Promise<Answer> {
    const { signedIn, ...sendOptions } = options;
    if (signedIn ?? request.signedIn) return this.authorized(request.method, request.path, request.body);
    return this.send(request.method, request.path, { ...sendOptions, body: request.body });
  }

  /** A call as the signed-in user. Bearer: with the access token, refreshed ahead of expiry, and
   * refreshed and retried once on `auth/token-expired` / `auth/invalid-token`. Cookie: the
   * browser sends the cookie; a 401 means the session ended. */
  private async authorized(method: string, path: string, body?: unknown): Promise<Answer> {
    if (this.transport === "cookie") {
      try {
        return await this.send(method, path, { body });
      } catch (error) {
        if (error instanceof IdentityError && error.status === 401 && SESSION_ENDED.concat(ErrorCode.tokenExpired).includes(error.code)) {
          await this.forget();
        }
        throw error;
      }
    }
    const token = await this.usableAccessToken();
    try {
      return await this.send(method, path, { body, bearer: token });
    } catch (error) {
      if (error instanceof IdentityError && (error.code === ErrorCode.tokenExpired || error.code === ErrorCode.invalidToken)) {
        const fresh = await this.freshAccessToken(token);
        return this.send(method, path, { body, bearer: fresh });
      }
      throw error;
    }
  }

  private expiringSoon(session: StoredSession): boolean {
    const lifetime = Math.max(0, session.expiresAt - session.obtainedAt);
    const leeway = Math.min(this.leewayMs, lifetime / 2);
    return this.now() >= session.expiresAt - leeway;
  }

  /** The access token to use now: the one kept, or a refreshed one when it is about to expire. */
  private async usableAccessToken(): Promise<string> {
    await this.ready;
    const session = this.session;
    if (!session) throw new IdentityClientError("client/not-signed-in", "sign in first");
    if (session.accessToken && !this.expiringSoon(session)) return session.accessToken;
    try {
      return await this.freshAccessToken(session.accessToken);
    } catch (error) {
      // Offline shortly before expiry: the old token still works until it expires.
      if (isTransportFailure(error) && session.accessToken && this.now() < session.expiresAt && this.session === session) {
        return session.accessToken;
      }
      throw error;
    }
  }

  /** An access token newer than `failed`: the current one if another call already refreshed,
   * else the result of the one refresh in flight (started here if none runs). JavaScript runs
   * one call at a time between awaits, so the check and the start are one step. */
  private freshAccessToken(failed: string | undefined): Promise<string> {
    const session = this.session;
    if (session && session.accessToken && session.accessToken !== failed && !this.expiringSoon(session)) {
      return Promise.resolve(session.accessToken);
    }
    if (!this.refreshing) {
      const running = this.performRefresh();
      this.refreshing = running;
      const clear = () => {
        if (this.refreshing === running) this.refreshing = null;
      };
      running.then(clear, clear);
    }
    return this.refreshing;
  }

  private async performRefresh(): Promise<string> {
    await this.ready;
    const session = this.session;
    if (!session) throw new IdentityClientError("client/not-signed-in", "sign in first");
    const refresh = api.refreshToken({ refreshToken: session.refreshToken });
    let answer: Answer;
    try {
      try {
        answer = await this.call(refresh);
      } catch (error) {
        if (!isTransportFailure(error)) throw error;
        // The answer may have been lost after the service rotated the token: the same token
        // again within the 30-second grace gets the same successor, so one retry is safe.
        answer = await this.call(refresh);
      }
    } catch (error) {
      if (error instanceof IdentityError && SESSION_ENDED.includes(error.code) && this.session === session) {
        await this.forget();
      }
      throw error;
    }
    if (this.session !== session) {
      // Signed out (or in again) while the refresh ran: its tokens belong to nobody now.
      if (this.session) return this.session.accessToken;
      throw new IdentityClientError("client/not-signed-in", "signed out during the refresh");
    }
    const tokens = tokenAnswer(answer);
    const user = tokens.user ? toUser(tokens.user) : session.user ?? null;
    this.session = this.sessionFrom(tokens, user, session.sessionId);
    await this.persist();
    this.signedIn(user, "refreshed");
    return this.session.accessToken;
  }

  private sessionFrom(tokens: TokenAnswer, user: User | null, previousSessionId?: string): StoredSession {
    const now = this.now();
    let expiresAt = now + (tokens.expires_in ?? 3600) * 1000;
    const exp = jwtClaims(tokens.access_token)?.exp;
    // The token's own exp when the clocks roughly agree; expires_in otherwise (a wrong device clock).
    if (typeof exp === "number" && Math.abs(exp * 1000 - expiresAt) < 5 * 60 * 1000) expiresAt = Math.min(expiresAt, exp * 1000);
    return {
      refreshToken: tokens.refresh_token,
      accessToken: tokens.access_token,
      expiresAt,
      obtainedAt: now,
      sessionId: tokens.session_id ?? previousSessionId,
      user,
    };
  }

  private async persist(): Promise<void> {
    if (this.transport === "cookie") return;
    if (this.session) await this.storage.setItem(StorageKeys.session, JSON.stringify(this.session));
    else await this.storage.removeItem(StorageKeys.session);
  }

  /** Keeps a sign-in's tokens and announces it. */
  private async keep(tokens: TokenAnswer): Promise<User> {
    const user = toUser(tokens.user);
    const previous = this.session?.user;
    if (previous && previous.isGuest && previous.uid === user.uid && !user.isGuest) {
      // Upgraded: the service forgot the guest secret, so forget it here too.
      await this.storage.removeItem(StorageKeys.guestSecret);
    }
    this.session = this.sessionFrom(tokens, user);
    await this.persist();
    this.signedIn(user, "signedIn");
    return user;
  }

  /** Forgets the session here (the guest secret stays: the same guest can come back). */
  private async forget(): Promise<void> {
    const was = this.session !== null || this.state.status !== "signedOut";
    this.session = null;
    this.cookieSessionId = null;
    try {
      await this.persist();
    } finally {
      if (was) this.emit({ status: "signedOut", event: "signedOut" });
    }
  }

  private updateUser(user: User): User {
    if (this.session) {
      this.session.user = user;
      void this.persist().catch(() => undefined);
    }
    if (this.transport === "cookie" || this.session) this.signedIn(user, "userUpdated");
    return user;
  }

  private unsupported(what: string): never {
    throw new IdentityClientError("client/unsupported", `${what} is not available with cookie transport (session-object apps sign in with a password or Apple)`);
  }

  private async firstFactor(request: api.APIRequest, options?: SignInOptions): Promise<SignInResult> {
    if (this.transport === "cookie") this.unsupported(request.path);
    await this.ready;
    const upgrade = (options?.upgradeGuest ?? true) && this.session?.user?.isGuest === true;
    return this.signInResult(await this.call(request, { signedIn: upgrade }));
  }

  private async signInResult(answer: Answer): Promise<SignInResult> {
    if (answer.status === 202) {
      const data = dataOf(answer) as { mfa?: unknown };
      return { status: "mfaRequired", challenge: camelize<MFAChallenge>(data.mfa) };
    }
    const tokens = tokenAnswer(answer);
    if (!tokens.user) throw new IdentityClientError("client/invalid-response", "token answer without user");
    const user = await this.keep(tokens);
    return { status: "signedIn", user, isNewUser: tokens.is_new_user === true };
  }

  private async signedInUser(answer: Answer): Promise<User> {
    const result = await this.signInResult(answer);
    if (result.status !== "signedIn") throw new IdentityClientError("client/invalid-response", "unexpected MFA challenge");
    return result.user;
  }

  /** Cookie transport: a session-object sign-in answer (`{session, user}` and the cookie, or 202 `{mfa}`). */
  private async cookieSignIn(path: string, body: Record<string, unknown>): Promise<SignInResult> {
    const answer = await this.send("POST", path, { body: { ...body, transport: "cookie" } });
    const bare = (answer.body ?? {}) as { mfa?: unknown; session?: { id?: string } };
    if (answer.status === 202 && bare.mfa) {
      return { status: "mfaRequired", challenge: camelize<MFAChallenge>(bare.mfa) };
    }
    // The answer's user is the profile's short shape: read the full one, which also proves the
    // browser kept the cookie.
    const user = toUser(dataOf(await this.call(api.getMe(), { signedIn: false })));
    this.cookieSessionId = typeof bare.session?.id === "string" ? bare.session.id : null;
    this.signedIn(user, "signedIn");
    return { status: "signedIn", user, isNewUser: false };
  }

  // MARK: tokens

  /** Whether a session is kept (it may still turn out to be revoked on the next call). */
  get isSignedIn(): boolean {
    return this.transport === "cookie" ? this.state.status === "signedIn" : this.session !== null;
  }

  /** The current access token (refreshed first when about to expire), for calling your own
   * backend, which verifies it offline (JWKS). Not available with cookie transport. */
  async accessToken(): Promise<string> {
    if (this.transport === "cookie") this.unsupported("accessToken()");
    return this.usableAccessToken();
  }

  /** Refreshes now (joining a refresh already in flight). Cookie transport: asks the service
   * whether the cookie's session still lives and re-reads the user. */
  async refresh(): Promise<void> {
    if (this.transport === "cookie") {
      try {
        const user = toUser(dataOf(await this.call(api.getMe(), { signedIn: false })));
        this.signedIn(user, "refreshed");
      } catch (error) {
        if (error instanceof IdentityError && error.status === 401) await this.forget();
        throw error;
      }
      return;
    }
    await this.ready;
    if (!this.session) throw new IdentityClientError("client/not-signed-in", "sign in first");
    const current = this.session.accessToken;
    if (!this.refreshing) {
      // Force: a token that is not about to expire is replaced too.
      this.session = { ...this.session, expiresAt: this.now() };
    }
    await this.freshAccessToken(current);
  }

  // MARK: sign-in

  /** Creates an account with email and password (201), or upgrades the signed-in guest.
   * Cookie transport: the account is created, then signed in with a cookie session. */
  async signUp(
    params: { email: string; password: string; firstName?: string; lastName?: string; username?: string },
    options?: SignInOptions,
  ): Promise<SignInResult> {
    const signUp = api.signUp({ email: params.email, password: params.password, firstName: params.firstName,
                                lastName: params.lastName, username: params.username });
    if (this.transport === "cookie") {
      // Sign-up answers tokens in the body in every profile; end that session at once (its
      // token is never kept) and sign in again the session-object way, with the cookie.
      const answer = await this.call(signUp, { credentials: "omit" });
      const tokens = tokenAnswer(answer);
      await this.call(api.signOut(), { signedIn: false, bearer: tokens.access_token, credentials: "omit" }).catch(() => undefined);
      const result = await this.cookieSignIn("/v1/auth/login", { email: params.email, password: params.password });
      return result.status === "signedIn" ? { ...result, isNewUser: true } : result;
    }
    return this.firstFactor(signUp, options);
  }

  /** Signs in with an email (or, `identifier`, an email or username) and a password. An account
   * with a second factor answers `mfaRequired`: pass its challenge and a code to `verifyMFA`. */
  async signIn(
    params: { email: string; password: string } | { identifier: string; password: string },
    options?: SignInOptions,
  ): Promise<SignInResult> {
    if (this.transport === "cookie") {
      const email = "email" in params ? params.email : params.identifier;
      return this.cookieSignIn("/v1/auth/login", { email, password: params.password });
    }
    const signIn = "email" in params ? api.signIn({ email: params.email, password: params.password })
      : api.signIn({ identifier: params.identifier, password: params.password });
    return this.firstFactor(signIn, options);
  }

  /** Signs in as this installation's guest: a 256-bit secret is made once and kept in the
   * storage, so the same guest comes back after a restart or a sign-out. */
  async signInAsGuest(): Promise<User> {
    if (this.transport === "cookie") this.unsupported("signInAsGuest()");
    const secret = await this.guestSecret();
    return this.signedInUser(await this.call(api.guestSignIn({ secret })));
  }

  private async guestSecret(): Promise<string> {
    const stored = await this.storage.getItem(StorageKeys.guestSecret);
    if (stored) return stored;
    const secret = base64urlEncode(this.randomBytes(32));
    await this.storage.setItem(StorageKeys.guestSecret, secret);
    return secret;
  }

  /** A fresh nonce for Sign in with Apple (single use, five minutes): put `sha256` in the Apple
   * request (`nonce` of AppleID.auth / expo-apple-authentication), send `value` with the token. */
  async appleNonce(): Promise<AppleNonce> {
    let issued: { nonce: string; expires_at: string };
    if (this.transport === "cookie") {
      issued = (await this.send("POST", "/v1/auth/apple/nonce", { body: {} })).body as typeof issued;
    } else {
      issued = dataOf(await this.call(api.nonce())) as typeof issued;
    }
    return { value: issued.nonce, sha256: await sha256Hex(issued.nonce), expiresAt: issued.expires_at };
  }

  /** Signs in with Apple's identity token. `nonce` is the raw `AppleNonce.value`. Apple gives
   * the name only the first time: pass it then. */
  async signInWithApple(
    params: { identityToken: string; authorizationCode?: string; nonce: string; firstName?: string; lastName?: string },
    options?: SignInOptions,
  ): Promise<SignInResult> {
    if (this.transport === "cookie") {
      const name = [params.firstName, params.lastName].filter(Boolean).join(" ");
      return this.cookieSignIn(
        "/v1/auth/apple/token",
        compact({ id_token: params.identityToken, nonce: params.nonce, authorization_code: params.authorizationCode, name: name || undefined }),
      );
    }
    return this.firstFactor(api.signInWithApple({ identityToken: params.identityToken, authorizationCode: params.authorizationCode,
                                                  nonce: params.nonce, firstName: params.firstName, lastName: params.lastName }), options);
  }

  /** Signs in with a Google id token (Google Identity Services, @react-native-google-signin). */
  async signInWithGoogle(params: { idToken: string; nonce?: string }, options?: SignInOptions): Promise<SignInResult> {
    return this.firstFactor(api.signInWithGoogle({ idToken: params.idToken, nonce: params.nonce }), options);
  }

  /** Signs in with a Firebase Authentication id token (`user.getIdToken()`). */
  async signInWithFirebase(params: { idToken: string }, options?: SignInOptions): Promise<SignInResult> {
    return this.firstFactor(api.signInWithIdToken({ provider: "firebase", idToken: params.idToken }), options);
  }

  /** Emails a 6-digit sign-in code (the same answer whether the account exists or not). */
  async sendEmailCode(email: string): Promise<void> {
    await this.call(api.sendEmailCode({ email }));
  }

  /** Signs in (creating the account if needed) with the emailed code. */
  async signInWithEmailCode(
    params: { email: string; code: string; firstName?: string; lastName?: string },
    options?: SignInOptions,
  ): Promise<SignInResult> {
    return this.firstFactor(api.verifyEmailCode({ email: params.email, code: params.code, firstName: params.firstName,
                                                  lastName: params.lastName }), options);
  }

  /** The email and code of a sign-in link (`<deep link>?mode=sign_in&email=…&code=…`), or null. */
  static parseMagicLink(link: string): { email: string; code: string } | null {
    // Parsed by hand: React Native's URL has no working searchParams.
    const match = /^[a-z][a-z0-9+.-]*:[^?#]*\?([^#]*)/i.exec(link.trim());
    if (!match) return null;
    const params = new Map<string, string>();
    for (const pair of match[1].split("&")) {
      const [key, value = ""] = pair.split("=", 2);
      try {
        params.set(decodeURIComponent(key.replace(/\+/g, " ")), decodeURIComponent(value.replace(/\+/g, " ")));
      } catch {
        return null;
      }
    }
    const email = params.get("email");
    const code = params.get("code");
    if (params.get("mode") !== "sign_in" || !email || !code) return null;
    return { email, code };
  }

  /** Signs in with a sign-in link from the email. */
  async signInWithMagicLink(link: string, options?: SignInOptions): Promise<SignInResult> {
    const parsed = IdentityClient.parseMagicLink(link);
    if (!parsed) throw new IdentityError({ status: 0, code: ErrorCode.invalidCode, detail: "not a sign-in link" });
    return this.signInWithEmailCode(parsed, options);
  }

  /** Texts a 6-digit code (E.164, or a national number with `countryCode`). */
  async sendPhoneCode(params: { phone: string; countryCode?: string }): Promise<{ sessionId: string; expiresIn: number }> {
    const answer = await this.call(api.sendPhoneCode({ phone: params.phone, countryCode: params.countryCode }));
    return camelize(dataOf(answer));
  }

  /** Signs in with the texted code. */
  async signInWithPhoneCode(params: { sessionId: string; code: string }, options?: SignInOptions): Promise<SignInResult> {
    return this.firstFactor(api.verifyPhoneCode({ sessionId: params.sessionId, code: params.code }), options);
  }

  /** Finishes a sign-in that answered `mfaRequired`, with a TOTP, backup, emailed or texted code. */
  async verifyMFA(challenge: MFAChallenge, code: string): Promise<User> {
    const answer = await this.call(api.verifyMfa({ challengeToken: challenge.challengeToken, code }), {
      credentials: this.transport === "cookie" ? "omit" : undefined,
    });
    if (this.transport === "cookie") {
      // The service answers this step with tokens, not a cookie: end that session rather than
      // hold a token in JavaScript.
      const tokens = tokenAnswer(answer);
      await this.call(api.signOut(), { signedIn: false, bearer: tokens.access_token, credentials: "omit" }).catch(() => undefined);
      this.unsupported("verifyMFA()");
    }
    return this.signedInUser(answer);
  }

  /** Ends this session at the service and forgets it here (also when the service cannot be
   * reached: the local session is gone either way). */
  async signOut(): Promise<void> {
    try {
      // Cookie transport: the browser sends the cookie; there is no token to add.
      await this.call(api.signOut(), { signedIn: this.transport !== "cookie" });
    } catch (error) {
      await this.forget();
      if (error instanceof IdentityClientError && error.code === "client/not-signed-in") return;
      if (error instanceof IdentityError && error.status === 401) return;
      throw error;
    }
    await this.forget();
  }

  /** Ends every session of the user in this app, this one included. */
  async signOutEverywhere(): Promise<void> {
    await this.call(api.signOutAll());
    await this.forget();
  }

  // MARK: passkeys

  /** Options for a passkey sign-in; with an identifier they list that account's credentials.
   * `publicKey` is ready for `navigator.credentials.get({ publicKey })`. */
  async passkeySignInOptions(identifier?: string): Promise<{
    flowId: string;
    hasPasskeys: boolean;
    options: RequestOptionsJSON;
    publicKey: PublicKeyCredentialRequestOptions;
  }> {
    const data = dataOf(await this.call(api.passkeySignInOptions({ identifier }))) as {
      flow_id: string;
      has_passkeys?: boolean;
      options: RequestOptionsJSON;
    };
    return { flowId: data.flow_id, hasPasskeys: data.has_passkeys === true, options: data.options, publicKey: toRequestOptions(data.options) };
  }

  /** Signs in with the platform's assertion (a PublicKeyCredential, or its JSON). */
  async signInWithPasskey(params: { flowId: string; credential: CredentialLike | CredentialJSON }, options?: SignInOptions): Promise<SignInResult> {
    return this.firstFactor(api.passkeySignInVerify({ flowId: params.flowId, response: credentialToJSON(params.credential) }),
                            { upgradeGuest: options?.upgradeGuest ?? false });
  }

  /** Browsers: options, `navigator.credentials.get`, then the sign-in. */
  async signInWithPasskeyPrompt(identifier?: string, options?: SignInOptions): Promise<SignInResult> {
    const started = await this.passkeySignInOptions(identifier);
    const credential = await webauthn().get({ publicKey: started.publicKey });
    if (!credential) throw new IdentityClientError("client/no-webauthn", "no credential chosen");
    return this.signInWithPasskey({ flowId: started.flowId, credential: credential as unknown as CredentialLike }, options);
  }

  /** Options to register a passkey for the signed-in user (`publicKey` for `navigator.credentials.create`). */
  async passkeyRegistrationOptions(): Promise<{ options: CreationOptionsJSON; publicKey: PublicKeyCredentialCreationOptions }> {
    const options = dataOf(await this.call(api.passkeyRegistrationOptions())) as CreationOptionsJSON;
    return { options, publicKey: toCreationOptions(options) };
  }

  /** Registers the platform's new credential (a PublicKeyCredential, or its JSON). */
  async registerPasskey(credential: CredentialLike | CredentialJSON, name?: string): Promise<Passkey> {
    const answer = await this.call(api.registerPasskey({ response: credentialToJSON(credential), name }));
    return camelize<Passkey>(dataOf(answer));
  }

  /** Browsers: options, `navigator.credentials.create`, then the registration. */
  async registerPasskeyPrompt(name?: string): Promise<Passkey> {
    const { publicKey } = await this.passkeyRegistrationOptions();
    const credential = await webauthn().create({ publicKey });
    if (!credential) throw new IdentityClientError("client/no-webauthn", "no credential created");
    return this.registerPasskey(credential as unknown as CredentialLike, name);
  }

  async passkeys(): Promise<Passkey[]> {
    return camelize<Passkey[]>(dataOf(await this.call(api.listPasskeys())));
  }

  async deletePasskey(id: string): Promise<void> {
    await this.call(api.deletePasskey(id));
  }

  // MARK: account

  /** The signed-in user (`GET /v1/me`). */
  async me(): Promise<User> {
    return this.updateUser(toUser(dataOf(await this.call(api.getMe()))));
  }

  /** Changes the profile; fields left out are not changed. */
  async updateMe(changes: { firstName?: string | null; lastName?: string | null; photoUrl?: string | null; username?: string | null }): Promise<User> {
    // null clears a field (sent as null), undefined leaves it (not sent).
    const request = api.updateMe({ firstName: changes.firstName, lastName: changes.lastName, photoUrl: changes.photoUrl,
                                   username: changes.username });
    return this.updateUser(toUser(dataOf(await this.call(request))));
  }

  /** The user's live sessions in this app; `current` marks this one. */
  async sessions(): Promise<SessionInfo[]> {
    return camelize<SessionInfo[]>(dataOf(await this.call(api.listSessions())));
  }

  /** Ends one session (a lost phone's). Ending the current one signs this client out. */
  async endSession(id: string): Promise<void> {
    await this.call(api.endSession(id));
    if ((this.session?.sessionId ?? this.cookieSessionId) === id) await this.forget();
  }

  /** Registers a push token for this session (unregistered when the session ends). */
  async registerDevice(params: { token: string; platform: DevicePlatform; kind: PushKind; name?: string }): Promise<Device> {
    const request = api.registerDevice({ token: params.token, platform: params.platform, kind: params.kind, deviceName: params.name });
    return camelize<Device>(dataOf(await this.call(request)));
  }

  async devices(): Promise<Device[]> {
    return camelize<Device[]>(dataOf(await this.call(api.listDevices())));
  }

  async unregisterDevice(id: string): Promise<void> {
    await this.call(api.unregisterDevice(id));
  }

  /** Emails a password reset code (the same answer whether the account exists or not). */
  async forgotPassword(email: string): Promise<void> {
    await this.call(api.forgotPassword({ email }));
  }

  /** Whether a reset code is valid, without spending it. */
  async checkPasswordResetCode(params: { email: string; code: string }): Promise<boolean> {
    const data = dataOf(await this.call(api.checkPasswordCode({ email: params.email, code: params.code }))) as { valid?: boolean };
    return data.valid === true;
  }

  /** Sets a new password with the emailed code; every session of the user ends (this one too). */
  async resetPassword(params: { email: string; code: string; newPassword: string }): Promise<void> {
    await this.call(api.resetPassword({ email: params.email, code: params.code, password: params.newPassword }));
  }

  /** Changes the password; the user's other sessions end, this one stays. */
  async changePassword(params: { currentPassword: string; newPassword: string }): Promise<void> {
    await this.call(api.changePassword({ currentPassword: params.currentPassword, newPassword: params.newPassword }));
  }

  /** Emails a code proving the user owns their email (at most one a minute: 429 otherwise). */
  async sendEmailVerification(): Promise<void> {
    await this.call(api.sendEmailVerification());
  }

  /** Marks the email verified with the emailed code. Signed in, the proof goes with this
   * session's token (the service keeps the password, links and this session); without a
   * session, the email-ownership rule applies in full. */
  async verifyEmail(params: { email: string; code: string }): Promise<User> {
    await this.ready;
    const signedIn = this.transport === "cookie" ? this.state.status === "signedIn" : this.session !== null;
    const answer = await this.call(api.verifyEmail({ email: params.email, code: params.code }), { signedIn });
    const user = toUser(dataOf(answer));
    return signedIn ? this.updateUser(user) : user;
  }

  /** Starts moving the account to a new address: a code is mailed there. Returns how many
   * seconds the code is valid. Needs a sign-in under 5 minutes old (with the second factor when
   * MFA is on), else `auth/reauth-required`. */
  async startEmailChange(email: string): Promise<number> {
    const data = dataOf(await this.call(api.startEmailChange({ email }))) as { expires_in?: number };
    return data.expires_in ?? 0;
  }

  /** Confirms the change with the mailed code; the user's other sessions end, this one stays. */
  async confirmEmailChange(code: string): Promise<User> {
    return this.updateUser(toUser(dataOf(await this.call(api.confirmEmailChange({ code })))));
  }

  /** Starts adding (or replacing) the account's phone: a code is texted to it (a way in: needs
   * a fresh sign-in). Confirm with `verifyPhone`. */
  async addPhone(params: { phone: string; countryCode?: string }): Promise<{ sessionId: string; expiresIn: number }> {
    const answer = await this.call(api.linkPhone({ phone: params.phone, countryCode: params.countryCode }));
    return camelize(dataOf(answer));
  }

  /** Confirms the phone with the texted code; returns the user with the verified phone. */
  async verifyPhone(params: { sessionId: string; code: string }): Promise<User> {
    const answer = await this.call(api.verifyLinkedPhone({ sessionId: params.sessionId, code: params.code }));
    return this.updateUser(toUser(dataOf(answer)));
  }

  /** Links Google to the signed-in account. */
  async linkGoogle(params: { idToken: string; nonce?: string }): Promise<User> {
    const answer = await this.call(api.linkIdentity("google", compact({ id_token: params.idToken, nonce: params.nonce })));
    return this.updateUser(toUser(dataOf(answer)));
  }

  /** Links Apple to the signed-in account. */
  async linkApple(params: { identityToken: string; authorizationCode?: string; nonce: string }): Promise<User> {
    const body = compact({ identity_token: params.identityToken, authorization_code: params.authorizationCode, nonce: params.nonce });
    return this.updateUser(toUser(dataOf(await this.call(api.linkIdentity("apple", body)))));
  }

  /** Unlinks a provider; never the last way in (`auth/last-sign-in-method`). */
  async unlink(provider: string): Promise<void> {
    await this.call(api.unlinkIdentity(provider));
  }

  /** Deletes the account and all its data with fresh proof of its own way in; wrong, old or
   * foreign proof is `auth/reauth-required` and nothing is deleted. Signs this client out. */
  async deleteAccount(proof: DeletionProof): Promise<void> {
    let request: api.APIRequest;
    let guest = false;
    if ("password" in proof) request = api.deleteMe({ password: proof.password });
    else if ("guestSecret" in proof) {
      request = api.deleteMe({ secret: proof.guestSecret });
      guest = true;
    } else if ("storedGuestSecret" in proof) {
      const secret = await this.storage.getItem(StorageKeys.guestSecret);
      if (!secret) throw new IdentityError({ status: 0, code: ErrorCode.reauthRequired, detail: "no guest secret stored" });
      request = api.deleteMe({ secret });
      guest = true;
    } else if ("googleIdToken" in proof) request = api.deleteMe({ idToken: proof.googleIdToken });
    else if ("appleIdentityToken" in proof) {
      request = api.deleteMe({ identityToken: proof.appleIdentityToken, authorizationCode: proof.authorizationCode, nonce: proof.nonce });
    } else request = api.deleteMe();
    await this.call(request);
    if (guest) await this.storage.removeItem(StorageKeys.guestSecret);
    await this.forget();
  }

  // MARK: MFA

  async mfaStatus(): Promise<MFAStatus> {
    return camelize<MFAStatus>(dataOf(await this.call(api.mfaStatus())));
  }

  /** Starts TOTP enrolment: show the QR code (or the secret), then `confirmTOTP(code)`. */
  async enrollTOTP(): Promise<TOTPEnrollment> {
    return camelize<TOTPEnrollment>(dataOf(await this.call(api.startTotp())));
  }

  /** Confirms TOTP with a code from the authenticator; returns the ten backup codes (shown once). */
  async confirmTOTP(code: string): Promise<string[]> {
    return backupCodes(await this.call(api.confirmTotp({ code })));
  }

  /** Starts the email second factor (a code is mailed); confirm with `confirmEmailMFA`. */
  async enrollEmailMFA(): Promise<void> {
    await this.call(api.startEmailMfa());
  }

  async confirmEmailMFA(code: string): Promise<string[]> {
    return backupCodes(await this.call(api.confirmEmailMfa({ code })));
  }

  /** Starts the SMS second factor (the account needs a verified phone); confirm with `confirmSMSMFA`. */
  async enrollSMSMFA(): Promise<void> {
    await this.call(api.startSmsMfa());
  }

  async confirmSMSMFA(code: string): Promise<string[]> {
    return backupCodes(await this.call(api.confirmSmsMfa({ code })));
  }

  /** A fresh set of ten backup codes; the old ones stop working. */
  async regenerateBackupCodes(): Promise<string[]> {
    return backupCodes(await this.call(api.regenerateBackupCodes()));
  }

  /** Turns MFA off with a current code (TOTP, backup, mailed or texted). */
  async disableMFA(code: string): Promise<void> {
    await this.call(api.disableMfa({ code }));
  }
}

// MARK: helpers

function dataOf(answer: Answer): unknown {
  const body = answer.body as { data?: unknown } | null;
  if (!body || typeof body !== "object" || !("data" in body)) {
    throw new IdentityClientError("client/invalid-response", `answer ${answer.status} without data`);
  }
  return body.data;
}

function tokenAnswer(answer: Answer): TokenAnswer {
  const data = dataOf(answer) as Partial<TokenAnswer> | null;
  if (!data || typeof data.access_token !== "string" || typeof data.refresh_token !== "string") {
    throw new IdentityClientError("client/invalid-response", `answer ${answer.status} is not a token answer`);
  }
  return data as TokenAnswer;
}

function backupCodes(answer: Answer): string[] {
  const data = dataOf(answer) as { backup_codes?: string[] };
  return data.backup_codes ?? [];
}

function parseSession(raw: string | null | undefined): StoredSession | null {
  if (!raw) return null;
  try {
    const s = JSON.parse(raw) as StoredSession;
    if (typeof s.refreshToken !== "string" || !s.refreshToken) return null;
    return {
      refreshToken: s.refreshToken,
      accessToken: typeof s.accessToken === "string" ? s.accessToken : "",
      expiresAt: typeof s.expiresAt === "number" ? s.expiresAt : 0,
      obtainedAt: typeof s.obtainedAt === "number" ? s.obtainedAt : 0,
      sessionId: s.sessionId,
      user: s.user ?? null,
    };
  } catch {
    return null;
  }
}

/** Drops the keys whose value is undefined (the service treats absent and null differently). */
function compact(object: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(object)) if (value !== undefined) out[key] = value;
  return out;
}

function webauthn(): CredentialsContainer {
  const credentials = (globalThis as { navigator?: { credentials?: CredentialsContainer } }).navigator?.credentials;
  if (!credentials) throw new IdentityClientError("client/no-webauthn", "navigator.credentials is not available here");
  return credentials;
}
