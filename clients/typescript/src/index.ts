export { IdentityClient } from "./client.js";
export type { IdentityClientOptions, SignInOptions } from "./client.js";
export { ErrorCode, IdentityError, IdentityClientError, isTransportFailure } from "./errors.js";
export type { ClientErrorCode, FieldError, IdentityErrorCode, KnownErrorCode } from "./errors.js";
export { MemoryStorage, StorageKeys, localStorageStorage, secureStoreStorage } from "./storage.js";
export type { SecureStoreLike, TokenStorage } from "./storage.js";
export { credentialToJSON, toCreationOptions, toRequestOptions } from "./passkeys.js";
export type { CreationOptionsJSON, CredentialJSON, CredentialLike, RequestOptionsJSON } from "./passkeys.js";
export { base64urlDecode, base64urlEncode, sha256Hex } from "./encoding.js";
export type {
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
  User,
} from "./types.js";
