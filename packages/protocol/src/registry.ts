// Registry lookups over the generated registry rows (schemas/registry/, AEP-0002 §3-§4).
import { TYPE_REGISTRY, type RegistryType } from './generated/registry.js';

/** Every registered core type name (AEP-0002 §4, `types.json`), including reserved ones. */
export const REGISTERED_TYPES: ReadonlySet<string> = new Set(TYPE_REGISTRY.map((r) => r.type));

const BY_TYPE: ReadonlyMap<string, RegistryType> = new Map(TYPE_REGISTRY.map((r) => [r.type, r]));

/** The registry row of a type, or undefined for vendor and unregistered types. */
export function registryEntry(type: string): RegistryType | undefined {
  return BY_TYPE.get(type);
}

/** True when `type` is a registered core type (any status). */
export function isRegisteredType(type: string): boolean {
  return REGISTERED_TYPES.has(type);
}

/** True when the registered type has a payload schema (so `data` is schema-checked). */
export function hasPayloadSchema(type: string): boolean {
  return BY_TYPE.get(type)?.schema != null;
}
