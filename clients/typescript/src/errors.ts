/** The service's error codes (the API contract's catalogue, docs/api-contract.md). Match on
 * these, never on `detail`. */
export const ErrorCode = {
  validationFailed: "auth/validation-failed",
  invalidJSON: "auth/invalid-json",
  payloadTooLarge: "auth/payload-too-large",
  unsupportedMediaType: "auth/unsupported-media-type",
  notFound: "auth/not-found",
  methodNotAllowed: "auth/method-not-allowed",
  rateLimited: "auth/rate-limited",
  internal: "auth/internal",
  unavailable: "auth/unavailable",
  badRequest: "auth/bad-request",
  invalidAppKey: "auth/invalid-app-key",
  tokenExpired: "auth/token-expired",
  invalidToken: "auth/invalid-token",
  refreshTokenRevoked: "auth/refresh-token-revoked",
  refreshTokenExpired: "auth/refresh-token-expired",
  sessionExpired: "auth/session-expired",
  emailAlreadyInUse: "auth/email-already-in-use",
  usernameTaken: "auth/username-taken",
  weakPassword: "auth/weak-password",
  invalidEmail: "auth/invalid-email",
  invalidCredential: "auth/invalid-credential",
  userDisabled: "auth/user-disabled",
  invalidAppleToken: "auth/invalid-apple-token",
  invalidGoogleToken: "auth/invalid-google-token",
  invalidIdToken: "auth/invalid-id-token",
  providerNotConfigured: "auth/provider-not-configured",
  providerUnavailable: "auth/provider-unavailable",
  accountExists: "auth/account-exists",
  accountExistsWithDifferentCredential: "auth/account-exists-with-different-credential",
  lastSignInMethod: "auth/last-sign-in-method",
  invalidCode: "auth/invalid-code",
  codeExpired: "auth/code-expired",
  reauthRequired: "auth/reauth-required",
  mfaAlreadyEnabled: "auth/mfa-already-enabled",
  invalidPasskey: "auth/invalid-passkey",
  passkeyNotConfigured: "auth/passkey-not-configured",
  originNotAllowed: "auth/origin-not-allowed",
  invalidPhoneNumber: "auth/invalid-phone-number",
  phoneAlreadyInUse: "auth/phone-already-in-use",
} as const;

/** A code of the catalogue; any other string the service may add later is kept as it came. */
export type KnownErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];
export type IdentityErrorCode = KnownErrorCode | (string & {});

/** One refused field of a request (422): where it is (`body.email`) and why. */
export interface FieldError {
  location: string;
  message: string;
}

/**
 * An error answer of the service: its `application/problem+json` body, decoded.
 * A body that is not problem+json still gives an error, with code `http/<status>`.
 */
export class IdentityError extends Error {
  readonly status: number;
  readonly code: IdentityErrorCode;
  readonly title?: string;
  readonly detail?: string;
  readonly type?: string;
  /** The refused fields (422 `auth/validation-failed`, `auth/weak-password`, ...). */
  readonly fieldErrors: FieldError[];
  /** Seconds to wait before trying again (429's `Retry-After`). */
  readonly retryAfter?: number;
  /** The answer's request id, to quote when reporting a problem. */
  readonly requestId?: string;

  constructor(init: {
    status: number;
    code: IdentityErrorCode;
    title?: string;
    detail?: string;
    type?: string;
    fieldErrors?: FieldError[];
    retryAfter?: number;
    requestId?: string;
  }) {
    super(`${init.status} ${init.code}${init.detail ? `: ${init.detail}` : ""}`);
    this.name = "IdentityError";
    this.status = init.status;
    this.code = init.code;
    this.title = init.title;
    this.detail = init.detail;
    this.type = init.type;
    this.fieldErrors = init.fieldErrors ?? [];
    this.retryAfter = init.retryAfter;
    this.requestId = init.requestId;
  }

  /** Decodes a problem+json answer (`body` already parsed, or undefined when it was not JSON). */
  static fromResponse(status: number, body: unknown, headers: { get(name: string): string | null }): IdentityError {
    const problem = (body && typeof body === "object" ? body : {}) as Record<string, unknown>;
    const str = (v: unknown) => (typeof v === "string" ? v : undefined);
    const retry = headers.get("retry-after");
    const retryAfter = retry !== null && retry.trim() !== "" && !Number.isNaN(Number(retry)) ? Number(retry) : undefined;
    const errors = Array.isArray(problem.errors)
      ? problem.errors
          .filter((e): e is Record<string, unknown> => !!e && typeof e === "object")
          .map((e) => ({ location: String(e.location ?? ""), message: String(e.message ?? "") }))
      : [];
    return new IdentityError({
      status,
      code: str(problem.code) ?? `http/${status}`,
      title: str(problem.title),
      detail: str(problem.detail),
      type: str(problem.type),
      fieldErrors: errors,
      retryAfter,
      requestId: str(problem.request_id) ?? headers.get("x-request-id") ?? undefined,
    });
  }
}

/** The client's own failures (not answers of the service). */
export type ClientErrorCode =
  | "client/not-signed-in"
  | "client/invalid-response"
  | "client/unsupported"
  | "client/no-random-source"
  | "client/no-webauthn";

export class IdentityClientError extends Error {
  readonly code: ClientErrorCode;
  constructor(code: ClientErrorCode, message: string) {
    super(`${code}: ${message}`);
    this.name = "IdentityClientError";
    this.code = code;
  }
}

/** True for an error of `fetch` itself (no answer came: offline, DNS, connection lost, CORS refusal). */
export function isTransportFailure(error: unknown): boolean {
  return error instanceof TypeError;
}
