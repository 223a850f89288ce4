// The shapes the client hands to apps: the service's JSON with camelCase names. Timestamps stay
// the service's RFC 3339 strings (microseconds included); `new Date(s)` reads them.

/** A user of the app, as `GET /v1/me` and every sign-in carry it. */
export interface User {
  /** A lower-case ULID; stable across a guest's upgrade. */
  uid: string;
  email: string | null;
  emailVerified: boolean;
  phone: string | null;
  username: string | null;
  firstName: string | null;
  lastName: string | null;
  photoUrl: string | null;
  isGuest: boolean;
  hasPassword: boolean;
  /** `password`, `google`, `apple`, `firebase`, ... */
  providers: string[];
  roles: string[];
  mfaEnabled: boolean;
  createdAt: string;
  [extra: string]: unknown;
}

/** A pending second factor (202 answer of a first-factor sign-in), valid five minutes. */
export interface MFAChallenge {
  challengeToken: string;
  expiresAt: string;
  /** `totp`, `backup_code`, `email`, `sms` */
  methods: string[];
}

/** What a first-factor sign-in gives: a session, or a second factor to ask for. */
export type SignInResult =
  | { status: "signedIn"; user: User; isNewUser: boolean }
  | { status: "mfaRequired"; challenge: MFAChallenge };

/** One live session of the user (`GET /v1/me/sessions`). */
export interface SessionInfo {
  /** `ses_…` */
  id: string;
  current: boolean;
  createdAt: string;
  lastSeenAt: string | null;
  expiresAt: string | null;
  ip: string | null;
  userAgent: string | null;
  amr: string[];
  mfaVerified: boolean;
}

export type DevicePlatform = "ios" | "android" | "web";
export type PushKind = "apns" | "fcm" | "voip";

/** A push device registered by a session (`/v1/me/devices`). */
export interface Device {
  /** `dev_…` */
  id: string;
  token: string;
  platform: DevicePlatform | string;
  kind: PushKind | string;
  deviceName: string | null;
  sessionId: string | null;
  createdAt: string;
}

/** The user's second-factor state (`GET /v1/me/mfa`). */
export interface MFAStatus {
  enabled: boolean;
  methods: string[];
  backupCodesRemaining: number;
  lastUsedAt: string | null;
  enabledAt: string | null;
}

/** A TOTP enrolment to show (secret for manual entry, `otpauth://` URI, QR code as SVG). */
export interface TOTPEnrollment {
  secret: string;
  otpauthUri: string;
  qrSvg: string;
}

/** A registered passkey (`GET /v1/me/passkeys`). */
export interface Passkey {
  /** `pk_…` */
  id: string;
  name: string;
  credentialId: string;
  transports: string[];
  backupEligible: boolean;
  backupState: boolean;
  createdAt: string;
  lastUsedAt: string | null;
}

/** A nonce for Sign in with Apple: put `sha256` in Apple's request, send `value` with the identity token. */
export interface AppleNonce {
  /** The raw nonce the service issued (single use, five minutes). */
  value: string;
  /** Lower-case hex SHA-256 of `value`: what Apple must put in the identity token. */
  sha256: string;
  expiresAt: string;
}

/** The fresh proof `DELETE /v1/me` wants: the account's own way in, again. */
export type DeletionProof =
  | { password: string }
  | { guestSecret: string }
  /** The guest secret this client keeps in its storage. */
  | { storedGuestSecret: true }
  | { googleIdToken: string }
  | { appleIdentityToken: string; authorizationCode: string; nonce: string }
  /** For accounts without a password, provider or guest secret: a sign-in under 5 minutes old. */
  | { recentSignIn: true };

/** The client's view of the session. */
export type AuthState =
  /** Still reading the storage (async adapters) or asking the service (cookie transport). */
  | { status: "unknown" }
  | { status: "signedIn"; user: User | null; event: AuthEvent }
  | { status: "signedOut"; event: AuthEvent };

/** Why the state changed: `initial` is the state found at start-up (or handed to a new listener). */
export type AuthEvent = "initial" | "signedIn" | "refreshed" | "userUpdated" | "signedOut";

/** The token answer of every sign-in and refresh, as the service sends it. */
export interface TokenAnswer {
  access_token: string;
  token_type?: string;
  expires_in?: number;
  refresh_token: string;
  session_id?: string;
  is_new_user?: boolean;
  user?: Record<string, unknown>;
}

/** snake_case keys → camelCase, deeply (values untouched). */
export function camelize<T>(value: unknown): T {
  if (Array.isArray(value)) return value.map((v) => camelize(v)) as unknown as T;
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      out[key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())] = camelize(v);
    }
    return out as T;
  }
  return value as T;
}

/** A user from the service's JSON, with the documented defaults for absent fields. */
export function toUser(raw: unknown): User {
  const u = camelize<Record<string, unknown>>(raw ?? {});
  return {
    ...u,
    uid: String(u.uid ?? ""),
    email: (u.email as string | null | undefined) ?? null,
    emailVerified: u.emailVerified === true,
    phone: (u.phone as string | null | undefined) ?? null,
    username: (u.username as string | null | undefined) ?? null,
    firstName: (u.firstName as string | null | undefined) ?? null,
    lastName: (u.lastName as string | null | undefined) ?? null,
    photoUrl: (u.photoUrl as string | null | undefined) ?? null,
    isGuest: u.isGuest === true,
    hasPassword: u.hasPassword === true,
    providers: Array.isArray(u.providers) ? (u.providers as string[]) : [],
    roles: Array.isArray(u.roles) ? (u.roles as string[]) : [],
    mfaEnabled: u.mfaEnabled === true,
    createdAt: String(u.createdAt ?? ""),
  };
}
