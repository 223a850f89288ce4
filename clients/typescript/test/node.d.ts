// The few Node built-ins the tests use (no @types/node: no npm packages here).
declare module "node:test" {
  type Fn = (t: TestContext) => void | Promise<void>;
  interface TestContext {
    skip(message?: string): void;
    diagnostic(message: string): void;
  }
  interface Options {
    skip?: boolean | string;
    timeout?: number;
    concurrency?: number | boolean;
  }
  export function test(name: string, fn: Fn): Promise<void>;
  export function test(name: string, options: Options, fn: Fn): Promise<void>;
  export function describe(name: string, fn: () => void): void;
  export function describe(name: string, options: Options, fn: () => void): void;
  export const it: typeof test;
  export function before(fn: () => void | Promise<void>): void;
  export function beforeEach(fn: () => void | Promise<void>): void;
  export function after(fn: () => void | Promise<void>): void;
  export default test;
}

declare module "node:assert/strict" {
  interface Assert {
    (value: unknown, message?: string): asserts value;
    ok(value: unknown, message?: string): asserts value;
    equal<T>(actual: unknown, expected: T, message?: string): asserts actual is T;
    notEqual(actual: unknown, expected: unknown, message?: string): void;
    deepEqual<T>(actual: unknown, expected: T, message?: string): asserts actual is T;
    notDeepEqual(actual: unknown, expected: unknown, message?: string): void;
    match(value: string, pattern: RegExp, message?: string): void;
    rejects(block: Promise<unknown> | (() => Promise<unknown>), error?: unknown, message?: string): Promise<void>;
    throws(block: () => unknown, error?: unknown, message?: string): void;
    fail(message?: string): never;
  }
  const assert: Assert;
  export default assert;
}

declare module "node:crypto" {
  export const webcrypto: Crypto;
}

declare const process: { env: Record<string, string | undefined> };
