// WebAuthn glue: the service's options JSON (base64url strings) to what navigator.credentials
// wants (ArrayBuffers), and the platform's PublicKeyCredential back to the JSON the service reads.
import { base64urlEncode, base64urlToBuffer } from "./encoding.js";

/** A credential descriptor as the service's JSON carries it. */
export interface CredentialDescriptorJSON {
  id: string;
  type: "public-key" | string;
  transports?: string[];
}

/** `PublicKeyCredentialCreationOptions` as JSON (`POST /v1/me/passkeys/options`). */
export interface CreationOptionsJSON {
  challenge: string;
  rp: { id?: string; name: string };
  user: { id: string; name: string; displayName: string };
  pubKeyCredParams: { type: "public-key" | string; alg: number }[];
  timeout?: number;
  excludeCredentials?: CredentialDescriptorJSON[];
  authenticatorSelection?: Record<string, unknown>;
  attestation?: string;
  extensions?: Record<string, unknown>;
  [extra: string]: unknown;
}

/** `PublicKeyCredentialRequestOptions` as JSON (`POST /v1/auth/passkey/options` → `options`). */
export interface RequestOptionsJSON {
  challenge: string;
  rpId?: string;
  timeout?: number;
  allowCredentials?: CredentialDescriptorJSON[];
  userVerification?: string;
  extensions?: Record<string, unknown>;
  [extra: string]: unknown;
}

/** A `PublicKeyCredential` as JSON (what `toJSON()` gives in browsers that have it). */
export interface CredentialJSON {
  id: string;
  rawId: string;
  type: "public-key" | string;
  response: {
    clientDataJSON: string;
    attestationObject?: string;
    transports?: string[];
    authenticatorData?: string;
    signature?: string;
    userHandle?: string | null;
  };
  clientExtensionResults: Record<string, unknown>;
  authenticatorAttachment?: string | null;
}

function descriptor(d: CredentialDescriptorJSON): PublicKeyCredentialDescriptor {
  const out: PublicKeyCredentialDescriptor = { id: base64urlToBuffer(d.id), type: "public-key" };
  if (d.transports) out.transports = d.transports as AuthenticatorTransport[];
  return out;
}

/** The service's registration options → `navigator.credentials.create({ publicKey })`'s argument. */
export function toCreationOptions(json: CreationOptionsJSON): PublicKeyCredentialCreationOptions {
  const { challenge, user, excludeCredentials, ...rest } = json;
  return {
    ...(rest as unknown as PublicKeyCredentialCreationOptions),
    challenge: base64urlToBuffer(challenge),
    user: { ...user, id: base64urlToBuffer(user.id) },
    excludeCredentials: (excludeCredentials ?? []).map(descriptor),
  };
}

/** The service's sign-in options → `navigator.credentials.get({ publicKey })`'s argument. */
export function toRequestOptions(json: RequestOptionsJSON): PublicKeyCredentialRequestOptions {
  const { challenge, allowCredentials, ...rest } = json;
  return {
    ...(rest as unknown as PublicKeyCredentialRequestOptions),
    challenge: base64urlToBuffer(challenge),
    allowCredentials: (allowCredentials ?? []).map(descriptor),
  };
}

type Bytes = ArrayBuffer | ArrayBufferView;

/** The structural part of a `PublicKeyCredential` this module reads (so tests and React
 * Native passkey libraries can hand in their own objects). */
export interface CredentialLike {
  id: string;
  rawId: Bytes;
  type: string;
  response: {
    clientDataJSON: Bytes;
    attestationObject?: Bytes;
    getTransports?: () => string[];
    authenticatorData?: Bytes;
    signature?: Bytes;
    userHandle?: Bytes | null;
  };
  authenticatorAttachment?: string | null;
  getClientExtensionResults?: () => Record<string, unknown>;
}

/** A credential from `navigator.credentials.create()` or `.get()` → the JSON the service reads.
 * Already-JSON credentials (React Native passkey libraries give those) pass through as they are. */
export function credentialToJSON(credential: CredentialLike | CredentialJSON): CredentialJSON {
  if (typeof credential.rawId === "string") return credential as CredentialJSON;
  const c = credential as CredentialLike;
  const r = c.response;
  const response: CredentialJSON["response"] = { clientDataJSON: base64urlEncode(r.clientDataJSON) };
  if (r.attestationObject) {
    response.attestationObject = base64urlEncode(r.attestationObject);
    response.transports = typeof r.getTransports === "function" ? r.getTransports() : [];
  }
  if (r.authenticatorData) response.authenticatorData = base64urlEncode(r.authenticatorData);
  if (r.signature) response.signature = base64urlEncode(r.signature);
  if (r.userHandle) response.userHandle = base64urlEncode(r.userHandle);
  const json: CredentialJSON = {
    id: c.id,
    rawId: base64urlEncode(c.rawId),
    type: c.type,
    response,
    clientExtensionResults: typeof c.getClientExtensionResults === "function" ? c.getClientExtensionResults() : {},
  };
  if (c.authenticatorAttachment !== undefined) json.authenticatorAttachment = c.authenticatorAttachment;
  return json;
}
