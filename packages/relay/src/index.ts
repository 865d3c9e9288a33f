// Public API of this package: named exports only (no `export *`).
export {};
