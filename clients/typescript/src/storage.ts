/**
 * Where the client keeps what must survive a restart: the session (refresh token, access token
 * and its expiry, the user) under one key, and the guest secret under another.
 *
 * The shape is the one `localStorage` and React Native's AsyncStorage already have; each method
 * may answer at once or with a promise, so async secure stores (Keychain/Keystore through
 * expo-secure-store, react-native-keychain, ...) plug in through a three-method adapter.
 * With cookie transport nothing is stored: the session is an HttpOnly cookie.
 */
export interface TokenStorage {
  getItem(key: string): string | null | undefined | Promise<string | null | undefined>;
  setItem(key: string, value: string): void | Promise<void>;
  removeItem(key: string): void | Promise<void>;
}

/** The keys the client uses in its storage. */
export const StorageKeys = {
  session: "identity.session",
  guestSecret: "identity.guest_secret",
} as const;

/** Keeps everything in memory: gone on reload. The safest choice for a web app that can afford
 * a new sign-in per page load (or uses cookie transport), and the default. */
export class MemoryStorage implements TokenStorage {
  private values = new Map<string, string>();
  getItem(key: string): string | null {
    return this.values.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    this.values.set(key, value);
  }
  removeItem(key: string): void {
    this.values.delete(key);
  }
}

/**
 * The browser's `localStorage` (optionally under a prefix). The weaker choice: any script that
 * runs in the page (an XSS hole, a compromised dependency) can read the refresh token and use
 * it elsewhere. Prefer cookie transport (`session-object` apps) or memory storage for web apps.
 */
export function localStorageStorage(prefix = "", storage: Storage = globalThis.localStorage): TokenStorage {
  if (!storage) throw new Error("localStorage is not available here");
  return {
    getItem: (key) => storage.getItem(prefix + key),
    setItem: (key, value) => storage.setItem(prefix + key, value),
    removeItem: (key) => storage.removeItem(prefix + key),
  };
}

/** The part of expo-secure-store's API the adapter uses (`import * as SecureStore from "expo-secure-store"`). */
export interface SecureStoreLike {
  getItemAsync(key: string, options?: unknown): Promise<string | null>;
  setItemAsync(key: string, value: string, options?: unknown): Promise<void>;
  deleteItemAsync(key: string, options?: unknown): Promise<void>;
}

/**
 * React Native: the iOS Keychain / Android Keystore through expo-secure-store (or anything with
 * its three methods). `options` is passed on, e.g. `{ keychainAccessible: SecureStore.AFTER_FIRST_UNLOCK_THIS_DEVICE_ONLY }`.
 */
export function secureStoreStorage(store: SecureStoreLike, options?: unknown): TokenStorage {
  return {
    getItem: (key) => store.getItemAsync(key, options),
    setItem: (key, value) => store.setItemAsync(key, value, options),
    removeItem: (key) => store.deleteItemAsync(key, options),
  };
}
